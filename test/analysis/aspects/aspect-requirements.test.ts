import { describe, expect, it } from 'vitest';
import { formatPosition } from '../../../src/core/index.js';
import { analyzerFor, errorOf } from './aspect-fixture.js';

// Checked against Bazel 4.2.3 on the same files: the DEBUG lines it printed are the expectations below.
const DEFS = `
AInfo = provider()
BInfo = provider()
SeenInfo = provider(fields = ["seen"])
LangInfo = provider()

def _a_impl(ctx):
    return [AInfo()]

with_a = rule(implementation = _a_impl, attrs = {"deps": attr.label_list()}, provides = [AInfo])

def _plain_impl(ctx):
    return [AInfo()]

plain = rule(implementation = _plain_impl, attrs = {"deps": attr.label_list()})

def _need_impl(target, ctx):
    seen = [target.label.name]
    for d in ctx.rule.attr.deps:
        if SeenInfo in d:
            seen += d[SeenInfo].seen
    return [SeenInfo(seen = seen)]

need_a = aspect(implementation = _need_impl, attr_aspects = ["deps"], required_providers = [AInfo])

def _first_impl(target, ctx):
    return [BInfo()]

first = aspect(implementation = _first_impl, attr_aspects = ["deps"], provides = [BInfo])

def _second_impl(target, ctx):
    return [LangInfo(has_b = BInfo in target, kind = ctx.rule.kind, ids = ctx.aspect_ids)]

second = aspect(implementation = _second_impl, attr_aspects = ["deps"], required_aspect_providers = [BInfo])

def _blind_impl(target, ctx):
    return [SeenInfo(seen = [BInfo in target])]

blind = aspect(implementation = _blind_impl, attr_aspects = ["deps"])

def _param_impl(target, ctx):
    return [LangInfo(lang = ctx.attr.lang)]

param = aspect(implementation = _param_impl, attrs = {"lang": attr.string(values = ["c", "py"], default = "c")})

def _show_impl(ctx):
    for d in ctx.attr.deps:
        print(d.label.name, d[SeenInfo].seen if SeenInfo in d else None)
    return []

show = rule(implementation = _show_impl, attrs = {"deps": attr.label_list(aspects = [need_a])})

def _chain_impl(ctx):
    for d in ctx.attr.deps:
        print(d.label.name, d[LangInfo].has_b, d[LangInfo].kind, d[LangInfo].ids)
    return []

chain = rule(implementation = _chain_impl, attrs = {"deps": attr.label_list(aspects = [first, second])})

def _blindr_impl(ctx):
    for d in ctx.attr.deps:
        print(d.label.name, d[SeenInfo].seen)
    return []

blindr = rule(implementation = _blindr_impl, attrs = {"deps": attr.label_list(aspects = [first, blind])})

def _pr_impl(ctx):
    print(ctx.attr.dep[LangInfo].lang)
    return []

pr = rule(implementation = _pr_impl, attrs = {"dep": attr.label(aspects = [param]), "lang": attr.string()})

def _boom_impl(target, ctx):
    fail("boom")

boom = aspect(implementation = _boom_impl)

def _three_impl(target, ctx):
    return 3

three = aspect(implementation = _three_impl)

def _unmet_impl(target, ctx):
    return []

unmet = aspect(implementation = _unmet_impl, provides = [AInfo])

def _uses_impl(ctx):
    return []

uses_boom = rule(implementation = _uses_impl, attrs = {"deps": attr.label_list(aspects = [boom])})
uses_three = rule(implementation = _uses_impl, attrs = {"deps": attr.label_list(aspects = [three])})
uses_unmet = rule(implementation = _uses_impl, attrs = {"deps": attr.label_list(aspects = [unmet])})
`;

const BUILD = `
load(":defs.bzl", "blindr", "chain", "plain", "pr", "show", "uses_boom", "uses_three", "uses_unmet", "with_a")
with_a(name = "x")
plain(name = "p", deps = [":x"])
with_a(name = "y", deps = [":p", ":x"])
show(name = "s", deps = [":y", ":p"])
chain(name = "c", deps = [":y"])
blindr(name = "b", deps = [":y"])
pr(name = "pr", dep = ":x", lang = "py")
pr(name = "pr_default", dep = ":x")
uses_boom(name = "boom", deps = [":x"])
uses_three(name = "three", deps = [":x"])
uses_unmet(name = "unmet", deps = [":x"])
`;

const FILES = { 'req/defs.bzl': DEFS, 'req/BUILD': BUILD };

function printedBy(label: string): string[] {
  const { analyzer, printed } = analyzerFor(FILES);
  analyzer.analyzeTopLevel(label);
  return printed;
}

function failure(label: string): string {
  const { analyzer } = analyzerFor(FILES);
  try {
    analyzer.analyzeTopLevel(label);
  } catch (e) {
    const pos = (e as { pos?: Parameters<typeof formatPosition>[0] }).pos;
    return `${pos ? `${formatPosition(pos)}: ` : ''}${(e as Error).message}`;
  }
  throw new Error('no error');
}

describe('which targets an aspect applies to, and what it sees', () => {
  it('required_providers: only rules that advertise them (rule(provides = ...)); propagation stops at the others', () => {
    // Bazel 4.2.3: "y ["y", "x"]" and "p None" (p returns AInfo but does not advertise it).
    expect(printedBy('//req:s')).toEqual(['y ["y", "x"]', 'p None']);
  });

  it('from the command line too: present-day Bazel (--incompatible_top_level_aspects_require_providers, on by default) skips a top-level target that does not advertise them', () => {
    const { analyzer, aspect } = analyzerFor(FILES);
    const need = aspect('//req:defs.bzl%need_a');
    expect(analyzer.aspects.applyTopLevel([need], analyzer.analyzeTopLevel('//req:p'))[0]!.value).toBeUndefined();
    expect(analyzer.aspects.applyTopLevel([need], analyzer.analyzeTopLevel('//req:y'))[0]!.value!.providers.size).toBe(1);
  });

  it('required_aspect_providers: an aspect sees an earlier one that provides them, on the same target', () => {
    expect(printedBy('//req:c')).toEqual(['y True with_a ["//req:defs.bzl%first", "//req:defs.bzl%second"]']);
    // Without required_aspect_providers it does not.
    expect(printedBy('//req:b')).toEqual(['y [False]']);
  });

  it("parameters take the requesting rule's attribute of the same name, checked against the aspect's values", () => {
    expect(printedBy('//req:pr')).toEqual(['py']);
    // Bazel 4.2.3 (when loading the package): "BUILD:9:3: //req:pr_default: invalid value in 'lang' attribute: ..."
    expect(failure('//req:pr_default')).toBe("req/BUILD:10:1: //req:pr_default: invalid value in 'lang' attribute: has to be one of 'c' or 'py' instead of ''");
  });
});

describe("errors of an aspect's implementation, in Bazel's words at the target it is applied to", () => {
  it('a failing implementation names the aspect and the target, with the backtrace', () => {
    const message = failure('//req:boom');
    expect(message).toMatch(/^req\/BUILD:3:1: in \/\/req:defs\.bzl%boom aspect on with_a rule \/\/req:x: \nTraceback/);
    expect(message).toContain('fail: boom');
  });

  it('a return value that is not providers', () => {
    expect(failure('//req:three')).toBe(
      'req/BUILD:3:1: in //req:defs.bzl%three aspect on with_a rule //req:x: Aspect implementation should return a struct, a list, or a provider instance, but got int',
    );
  });

  it('a provider promised in provides and not returned', () => {
    expect(failure('//req:unmet')).toBe("req/BUILD:3:1: Aspect '//req:defs.bzl%unmet', applied to '//req:x', does not provide advertised provider 'AInfo'");
  });
});

describe('aspect() checks its arguments as Bazel does', () => {
  const bzlError = (body: string) => {
    const { graph } = analyzerFor({ 'bad/BUILD': '', 'bad/defs.bzl': `def _impl(target, ctx):\n    return []\n\n${body}\n` });
    return errorOf(() => graph.bzlModule('//bad:defs.bzl'));
  };

  it("'*' alone in attr_aspects; attr_aspects of strings", () => {
    expect(bzlError('a = aspect(_impl, attr_aspects = ["*", "deps"])')).toContain("'*' must be the only string in 'attr_aspects' list");
    expect(bzlError('a = aspect(_impl, attr_aspects = [1])')).toContain('aspect: for parameter attr_aspects: got int in the list, want string');
  });

  it('parameters are bool, int or string; implicit label attributes need a default', () => {
    expect(bzlError('a = aspect(_impl, attrs = {"dep": attr.label()})')).toContain(
      "Aspect parameter attribute 'dep' must have type 'bool', 'int' or 'string'.",
    );
    expect(bzlError('a = aspect(_impl, attrs = {"_dep": attr.label()})')).toContain("Aspect attribute '_dep' has no default value.");
    expect(bzlError('a = aspect(_impl, attrs = {"p": attr.string(values = ["x"], default = "y")})')).toContain(
      "Aspect parameter attribute 'p' has a bad default value",
    );
  });

  it('parameters Kiln does not honour yet fail when given, never ignored', () => {
    expect(bzlError('b = aspect(_impl)\na = aspect(_impl, requires = [b])')).toContain('aspect(requires = ...) is not supported by Kiln');
    expect(bzlError('a = aspect(_impl, exec_compatible_with = ["//x:y"])')).toContain('aspect(exec_compatible_with = ...) is not supported by Kiln');
    const { graph } = analyzerFor({
      'ok/BUILD': '',
      'ok/defs.bzl': 'def _impl(target, ctx):\n    return []\n\na = aspect(_impl, requires = [], exec_groups = {})\n',
    });
    expect(graph.bzlModule('//ok:defs.bzl').globals.has('a')).toBe(true);
  });

  it('provides holds providers; apply_to_generating_rules excludes required_providers; aspects = [...] holds aspects', () => {
    expect(bzlError('a = aspect(_impl, provides = ["x"])')).toContain("Illegal argument: element in 'provides' is of unexpected type.");
    expect(bzlError('P = provider()\na = aspect(_impl, required_providers = [P], apply_to_generating_rules = True)')).toContain(
      'An aspect cannot simultaneously have required providers and apply to generating rules.',
    );
    expect(bzlError('a = attr.label_list(aspects = [1])')).toContain('attr.label_list: for parameter aspects: got element of type int, want Aspect');
    // Bazel 4.2.3: "Error in label_list: aspect //more:defs.bzl%give added more than once"
    const { graph } = analyzerFor({
      'bad/BUILD': '',
      'bad/a.bzl': 'def _impl(target, ctx):\n    return []\n\na = aspect(_impl)\n',
      'bad/defs.bzl': 'load(":a.bzl", "a")\n\nb = attr.label_list(aspects = [a, a])\n',
    });
    expect(errorOf(() => graph.bzlModule('//bad:defs.bzl'))).toContain('aspect //bad:a.bzl%a added more than once');
  });
});

describe('the merged dependency, as Bazel 4.2.3 answers on the same files', () => {
  const MERGE = {
    'more/defs.bzl': `
NeedInfo = provider()

def _di(target, ctx):
    return [DefaultInfo()]

di = aspect(implementation = _di)

def _give(target, ctx):
    return [NeedInfo()]

give = aspect(implementation = _give)

def _r(ctx):
    return []

r = rule(implementation = _r, attrs = {"deps": attr.label_list()})
uses_di = rule(implementation = _r, attrs = {"deps": attr.label_list(aspects = [di])})
needs = rule(implementation = _r, attrs = {"deps": attr.label_list(aspects = [give], providers = [NeedInfo])})
`,
    'more/BUILD': `
load(":defs.bzl", "needs", "r", "uses_di")
r(name = "x")
uses_di(name = "d", deps = [":x"])
needs(name = "n", deps = [":x"])
`,
  };

  it('every target has a DefaultInfo: an aspect returning one gives it twice', () => {
    expect(errorOf(() => analyzerFor(MERGE).analyzer.analyzeTopLevel('//more:d'))).toBe('Provider DefaultInfo provided twice');
  });

  it("an attribute's providers are checked with the aspects' providers merged in", () => {
    expect(analyzerFor(MERGE).analyzer.analyzeTopLevel('//more:n').label).toBe('//more:n');
  });
});
