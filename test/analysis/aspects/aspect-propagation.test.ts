import { describe, expect, it } from 'vitest';
import { analyzerFor, errorOf, writtenContents } from './aspect-fixture.js';

// The workspace of the Bazel 4.2.3 run this file was checked against (see the README of
// src/analysis/aspects): count_aspect propagates along `deps` and counts the rules below a target.
const DEFS = `
MyInfo = provider(fields = ["srcs"])
CountInfo = provider(fields = ["count"])

def _count_impl(target, ctx):
    count = 1
    for d in getattr(ctx.rule.attr, "deps", []):
        count += d[CountInfo].count
    out = ctx.actions.declare_file(ctx.label.name + ".count")
    ctx.actions.write(out, "%s %d %s\\n" % (ctx.rule.kind, count, ctx.attr._tool.label))
    return [CountInfo(count = count), OutputGroupInfo(counts = depset([out]))]

count_aspect = aspect(
    implementation = _count_impl,
    attr_aspects = ["deps"],
    attrs = {"_tool": attr.label(default = "//pkg:tool.sh", allow_single_file = True)},
)

def _lib_impl(ctx):
    return [MyInfo(srcs = ctx.files.srcs)]

lib = rule(implementation = _lib_impl, attrs = {"srcs": attr.label_list(allow_files = True), "deps": attr.label_list(), "data": attr.label_list()})

def _top_impl(ctx):
    total = 0
    for d in ctx.attr.deps:
        total += d[CountInfo].count
    out = ctx.actions.declare_file(ctx.label.name + ".txt")
    ctx.actions.write(out, "total %d\\n" % total)
    return [DefaultInfo(files = depset([out]))]

top = rule(implementation = _top_impl, attrs = {"deps": attr.label_list(aspects = [count_aspect])})

def _all_impl(target, ctx):
    names = [target.label.name]
    for attr_name in dir(ctx.rule.attr):
        for d in getattr(ctx.rule.attr, attr_name) if type(getattr(ctx.rule.attr, attr_name)) == "list" else []:
            if type(d) == "Target" and NamesInfo in d:
                names += d[NamesInfo].names
    return [NamesInfo(names = sorted(names))]

NamesInfo = provider(fields = ["names"])
all_aspect = aspect(implementation = _all_impl, attr_aspects = ["*"])

def _names_impl(ctx):
    print("names", ctx.attr.dep[NamesInfo].names)
    return []

names = rule(implementation = _names_impl, attrs = {"dep": attr.label(aspects = [all_aspect])})

def _dup_impl(target, ctx):
    return [MyInfo(srcs = [])]

dup_aspect = aspect(implementation = _dup_impl)

def _dtop_impl(ctx):
    return []

dtop = rule(implementation = _dtop_impl, attrs = {"deps": attr.label_list(aspects = [dup_aspect])})
`;

const BUILD = `
load(":defs.bzl", "dtop", "lib", "names", "top")
exports_files(["tool.sh"])
lib(name = "a", srcs = ["a.txt"])
lib(name = "b", deps = [":a"])
lib(name = "c", deps = [":b"], data = [":d"])
lib(name = "d")
top(name = "t", deps = [":b"])
top(name = "t2", deps = [":c", ":a"])
names(name = "n", dep = ":c")
dtop(name = "dup", deps = [":a"])
filegroup(name = "fg", srcs = [":a"])
alias(name = "al", actual = ":b")
top(name = "via_alias", deps = [":al"])
`;

const FILES = { 'pkg/defs.bzl': DEFS, 'pkg/BUILD': BUILD, 'pkg/a.txt': 'a', 'pkg/tool.sh': '' };

describe('aspects applied through attr.label(aspects = ...)', () => {
  it('propagate along attr_aspects; the rule sees their providers on its dependencies; their actions are registered', () => {
    const { analyzer } = analyzerFor(FILES);
    const t = analyzer.analyzeTopLevel('//pkg:t');
    const written = writtenContents(analyzer.actions());
    // As Bazel 4.2.3 wrote them: t.txt "total 2", b.count "lib 2 //pkg:tool.sh", a.count "lib 1 //pkg:tool.sh".
    expect(written.get('pkg/t.txt')).toBe('total 2\n');
    expect(written.get('pkg/b.count')).toBe('lib 2 //pkg:tool.sh\n');
    expect(written.get('pkg/a.count')).toBe('lib 1 //pkg:tool.sh\n');
    // The aspect's actions are not the rule's own, and its outputs sit in the dependency's package.
    expect(t.actions.map((a) => a.outputs[0]!.execPath)).toEqual(['bazel-out/k8-fastbuild/bin/pkg/t.txt']);
  });

  it('propagate only along the attributes attr_aspects names', () => {
    const { analyzer } = analyzerFor(FILES);
    analyzer.analyzeTopLevel('//pkg:t2');
    const written = writtenContents(analyzer.actions());
    // c -> b -> a along deps: 3 + a alone: 1. d is reached through `data` only: no aspect there.
    expect(written.get('pkg/t2.txt')).toBe('total 4\n');
    expect(written.has('pkg/d.count')).toBe(false);
  });

  it('"*" propagates along every dependency attribute', () => {
    const { analyzer, printed } = analyzerFor(FILES);
    analyzer.analyzeTopLevel('//pkg:n');
    expect(printed).toEqual(['names ["a", "b", "c", "d"]']);
  });

  it('an application is computed once however many dependents reach it', () => {
    const { analyzer } = analyzerFor(FILES);
    analyzer.analyzeTopLevel('//pkg:t');
    analyzer.analyzeTopLevel('//pkg:t2');
    const outputs = analyzer.actions().map((a) => a.outputs[0]!.execPath);
    expect(outputs.filter((p) => p.endsWith('/a.count'))).toHaveLength(1);
  });

  it("a deprecated dependency warns once, though the aspect's ctx.rule reads the rule's dependencies again", () => {
    const files = {
      ...FILES,
      'old/BUILD': 'load("//pkg:defs.bzl", "lib")\nlib(name = "o", deprecation = "use //pkg:a", visibility = ["//visibility:public"])\n',
      'pkg/BUILD': `${BUILD}\nlib(name = "uses_old", deps = ["//old:o"])\ntop(name = "t_old", deps = [":uses_old"])\n`,
    };
    const { analyzer, warnings } = analyzerFor(files);
    analyzer.analyzeTopLevel('//pkg:t_old');
    expect(warnings).toEqual(["target '//pkg:uses_old' depends on deprecated target '//old:o': use //pkg:a"]);
  });

  it('an alias stands for its actual target', () => {
    const { analyzer } = analyzerFor(FILES);
    analyzer.analyzeTopLevel('//pkg:via_alias');
    expect(writtenContents(analyzer.actions()).get('pkg/via_alias.txt')).toBe('total 2\n');
  });

  it('a provider the target and the aspect both give is an error at the dependent, in Bazel words', () => {
    const { analyzer } = analyzerFor(FILES);
    // Bazel 4.2.3: "ERROR: .../pkg/BUILD:11:5: Provider MyInfo provided twice"
    expect(errorOf(() => analyzer.analyzeTopLevel('//pkg:dup'))).toBe('Provider MyInfo provided twice');
  });
});
