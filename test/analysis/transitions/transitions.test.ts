import { describe, expect, it } from 'vitest';
import { createConfigurations } from '../../../src/analysis/config/build-configuration.js';
import { Analyzer } from '../../../src/analysis/configured/analyzer.js';
import { LoadedTargetGraph } from '../../../src/analysis/configured/loaded-target-graph.js';
import { platformDeclarationsFrom } from '../../../src/analysis/configured/platform-declarations.js';
import { parseBuildOptions } from '../../../src/analysis/options/parse-build-options.js';
import { workspaceFixture } from '../../loading/fixture.js';
import { newLoader } from '../../loading/load-helper.js';
import { LINUX_X64 } from '../config/config-fixture.js';

const DEFS = `
load("@bazel_skylib//rules:common_settings.bzl", "BuildSettingInfo")

def _flavor_impl(settings, attr):
    return {"//flags:flavor": attr.flavor}

flavor_transition = transition(implementation = _flavor_impl, inputs = [], outputs = ["//flags:flavor"])

def _opt_impl(settings, attr):
    return {"//command_line_option:compilation_mode": "opt"}

opt_transition = transition(implementation = _opt_impl, inputs = [], outputs = ["//command_line_option:compilation_mode"])

def _split_impl(settings, attr):
    return {
        "chocolate": {"//flags:flavor": "chocolate"},
        "vanilla": {"//flags:flavor": "vanilla"},
    }

split_transition = transition(implementation = _split_impl, inputs = [], outputs = ["//flags:flavor"])

def _report_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".txt")
    ctx.actions.write(out, "flavor=%s mode=%s" % (ctx.attr._flavor[BuildSettingInfo].value, ctx.var["COMPILATION_MODE"]))
    return [DefaultInfo(files = depset([out]))]

report = rule(implementation = _report_impl, attrs = {"_flavor": attr.label(default = "//flags:flavor")})

flavored_report = rule(
    implementation = _report_impl,
    cfg = flavor_transition,
    attrs = {"flavor": attr.string(), "_flavor": attr.label(default = "//flags:flavor")},
)

def _collect_impl(ctx):
    files = [f for d in ctx.attr.deps for f in d[DefaultInfo].files.to_list()]
    out = ctx.actions.declare_file(ctx.label.name + ".txt")
    split = ctx.split_attr.split
    lines = ["%s=%s" % (k, split[k][DefaultInfo].files.to_list()[0].path) for k in sorted(split.keys())]
    ctx.actions.write(out, "\\n".join([f.path for f in files] + lines + [str(type(ctx.attr.one))]))
    return [DefaultInfo(files = depset([out] + files))]

def _tool_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.write(out, "\\n".join([f.path for d in ctx.attr.deps for f in d[DefaultInfo].files.to_list()]), is_executable = True)
    return [DefaultInfo(files = depset([out]), executable = out)]

tool = rule(implementation = _tool_impl, executable = True, attrs = {"deps": attr.label_list(cfg = split_transition)})

def _uses_tool_impl(ctx):
    return [DefaultInfo(files = depset([ctx.executable._tool]))]

uses_tool = rule(implementation = _uses_tool_impl, attrs = {"_tool": attr.label(default = "//app:tool", executable = True, cfg = "exec")})

collect = rule(
    implementation = _collect_impl,
    attrs = {
        "deps": attr.label_list(cfg = opt_transition),
        "one": attr.label(cfg = opt_transition),
        "split": attr.label(cfg = split_transition),
    },
)
`;

const FILES: Record<string, string> = {
  WORKSPACE: 'workspace(name = "tr")\n',
  'flags/BUILD': `
load("@bazel_skylib//rules:common_settings.bzl", "string_flag")
string_flag(name = "flavor", build_setting_default = "plain", visibility = ["//visibility:public"])
config_setting(name = "is_chocolate", flag_values = {":flavor": "chocolate"})
`,
  'rules/BUILD': '',
  'rules/defs.bzl': DEFS,
  'app/BUILD': `
load("//rules:defs.bzl", "collect", "flavored_report", "report", "tool", "uses_tool")
tool(name = "tool", deps = [":plain"])
uses_tool(name = "uses_tool")
report(name = "plain")
flavored_report(name = "choc", flavor = "chocolate")
genrule(
    name = "pick",
    outs = ["pick.txt"],
    cmd = select({"//flags:is_chocolate": "echo choc > $@", "//conditions:default": "echo other > $@"}),
)
collect(name = "all", deps = [":plain"], one = ":plain", split = ":plain")
`,
};

function analyzerFor(args: string[] = [], files: Record<string, string> = FILES) {
  const root = workspaceFixture(files);
  const graph = new LoadedTargetGraph(newLoader(root));
  const configurations = createConfigurations(parseBuildOptions(args).options, { host: LINUX_X64, platforms: platformDeclarationsFrom(graph) });
  return new Analyzer(graph, { configurations, buildSettings: (l) => graph.buildSetting(l) });
}

function written(analyzer: Analyzer, label: string): string[] {
  return analyzer
    .analyzeTopLevel(label)
    .actions.map((a) => `${a.outputs[0]!.execPath}: ${(a as { inProcess?: { content?: string } }).inProcess?.content ?? ''}`);
}

describe('configuration transitions', () => {
  it('applies a rule (incoming) transition: the target and its dependencies are analysed in the new configuration, apart', () => {
    const analyzer = analyzerFor();
    const ct = analyzer.analyzeTopLevel('//app:choc');
    expect(ct.config.mnemonic).toMatch(/^k8-fastbuild-ST-[0-9a-f]{12}$/);
    expect(ct.files.map((f) => f.artifact.execPath)).toEqual([`bazel-out/${ct.config.mnemonic}/bin/app/choc.txt`]);
    expect(written(analyzer, '//app:choc')[0]).toContain('flavor=chocolate mode=fastbuild');
    // The untransitioned target keeps the top-level directory.
    expect(written(analyzer, '//app:plain')[0]).toBe('bazel-out/k8-fastbuild/bin/app/plain.txt: flavor=plain mode=fastbuild');
  });
  it('analyses a split dependency once per split key, each in the directory Bazel 4.2.3 names, and resolves select() in each', () => {
    const analyzer = analyzerFor();
    const ct = analyzer.analyzeTopLevel('//app:all');
    const content = (ct.actions[0]!.inProcess as { content: string }).content.split('\n');
    // deps and one: 1:1 to opt, where compilation_mode names the directory itself (no hash); the split: one hash per flavor.
    expect(content).toEqual([
      'bazel-out/k8-opt/bin/app/plain.txt',
      'chocolate=bazel-out/k8-fastbuild-ST-c3676c3bb40d/bin/app/plain.txt',
      'vanilla=bazel-out/k8-fastbuild-ST-6084263ae57f/bin/app/plain.txt',
      // An attribute with a Starlark transition is a list even for attr.label, as in Bazel.
      'list',
    ]);
    const pick = (config: typeof ct.config) => analyzer.analyze('//app:pick', config).actions[0]!.argv.join(' ');
    const configs = new Map([...analyzer.actions()].map((a) => [a.outputs[0]!.execPath.split('/')[1]!, a]));
    expect([...configs.keys()].sort()).toEqual(['k8-fastbuild', 'k8-fastbuild-ST-6084263ae57f', 'k8-fastbuild-ST-c3676c3bb40d', 'k8-opt']);
    const chocolate = analyzer.actions().find((a) => a.outputs[0]!.execPath.includes('ST-c3676c3bb40d'))!;
    expect(pick(analyzer.analyzeTopLevel('//app:choc').config)).toContain('echo choc');
    expect(pick(ct.config)).toContain('echo other');
    expect(chocolate.outputs[0]!.execPath).toBe('bazel-out/k8-fastbuild-ST-c3676c3bb40d/bin/app/plain.txt');
  });
  it('keeps a transition applied in the exec configuration exec: its own exec directory with a hash', () => {
    const analyzer = analyzerFor();
    const [script] = analyzer.analyzeTopLevel('//app:uses_tool').files;
    expect(script!.artifact.execPath).toBe('bazel-out/k8-opt-exec/bin/app/tool.sh');
    const tool = analyzer.actions().find((a) => a.outputs[0]!.execPath.endsWith('/tool.sh'))!;
    const paths = (tool.inProcess as { content: string }).content.split('\n');
    expect(paths).toHaveLength(2);
    for (const p of paths) expect(p).toMatch(/^bazel-out\/k8-opt-exec-ST-[0-9a-f]{12}\/bin\/app\/plain\.txt$/);
  });
  it('names the directory of a transitioned configuration that equals the command line without a hash', () => {
    const analyzer = analyzerFor(['--//flags:flavor=chocolate']);
    expect(analyzer.analyzeTopLevel('//app:choc').config.mnemonic).toBe('k8-fastbuild');
  });
});

const ERRORS = `
def _undeclared_impl(settings, attr):
    return {"//command_line_option:compilation_mode": "opt", "//command_line_option:cpu": "arm"}

undeclared = transition(implementation = _undeclared_impl, inputs = [], outputs = ["//command_line_option:compilation_mode"])

def _missing_impl(settings, attr):
    return {}

def _partial_impl(settings, attr):
    return {"//command_line_option:compilation_mode": "opt"}

partial = transition(implementation = _partial_impl, inputs = [], outputs = ["//command_line_option:compilation_mode", "//command_line_option:cpu"])
bad_input = transition(implementation = _missing_impl, inputs = ["//command_line_option:no_such_option", "//command_line_option:jobs"], outputs = [])
on_define = transition(implementation = _missing_impl, inputs = [], outputs = ["//command_line_option:define"])

def _not_setting_impl(settings, attr):
    return {"//app:plain": "x"}

not_setting = transition(implementation = _not_setting_impl, inputs = [], outputs = ["//app:plain"])

def _bad_value_impl(settings, attr):
    return {"//command_line_option:compilation_mode": "fast"}

bad_value = transition(implementation = _bad_value_impl, inputs = [], outputs = ["//command_line_option:compilation_mode"])

def _bad_type_impl(settings, attr):
    return {"//flags:flavor": 3}

bad_type = transition(implementation = _bad_type_impl, inputs = [], outputs = ["//flags:flavor"])

def _impl(ctx):
    return []

def with_cfg(t):
    return rule(implementation = _impl, attrs = {"dep": attr.label(cfg = t)})

undeclared_rule = with_cfg(undeclared)
partial_rule = with_cfg(partial)
bad_input_rule = with_cfg(bad_input)
on_define_rule = with_cfg(on_define)
not_setting_rule = with_cfg(not_setting)
bad_value_rule = with_cfg(bad_value)
bad_type_rule = with_cfg(bad_type)

def _two_impl(settings, attr):
    return [{"//flags:flavor": "a"}, {"//flags:flavor": "b"}]

two = transition(implementation = _two_impl, inputs = [], outputs = ["//flags:flavor"])
split_incoming = rule(implementation = _impl, cfg = two)
`;

const ERROR_FILES: Record<string, string> = {
  ...FILES,
  'rules/errors.bzl': ERRORS,
  'bad/BUILD': `
load("//rules:errors.bzl", "split_incoming")
split_incoming(name = "split_incoming")
load("//rules:errors.bzl", "bad_input_rule", "bad_type_rule", "bad_value_rule", "not_setting_rule", "on_define_rule", "partial_rule", "undeclared_rule")
undeclared_rule(name = "undeclared", dep = "//app:plain")
partial_rule(name = "partial", dep = "//app:plain")
bad_input_rule(name = "bad_input", dep = "//app:plain")
on_define_rule(name = "on_define", dep = "//app:plain")
not_setting_rule(name = "not_setting", dep = "//app:plain")
bad_value_rule(name = "bad_value", dep = "//app:plain")
bad_type_rule(name = "bad_type", dep = "//app:plain")
`,
};

function errorOf(label: string): { message: string; where: string } {
  try {
    analyzerFor([], ERROR_FILES).analyzeTopLevel(label);
  } catch (e) {
    const pos = (e as { pos?: { file: string; line: number } }).pos;
    return { message: (e as Error).message, where: pos ? `${pos.file.split('/').slice(-2).join('/')}:${pos.line}` : '' };
  }
  throw new Error(`no error for ${label}`);
}

describe("transition errors, in Bazel's words", () => {
  it('reports outputs that differ from the declared ones at the implementation function', () => {
    expect(errorOf('//bad:undeclared')).toEqual({
      message: "invalid result from transition function: transition function returned undeclared output '//command_line_option:cpu'",
      where: 'rules/errors.bzl:2',
    });
    expect(errorOf('//bad:partial').message).toBe(
      'invalid result from transition function: transition outputs [//command_line_option:cpu] were not defined by transition function',
    );
  });
  it('reports settings that are none at the transition() call', () => {
    expect(errorOf('//bad:bad_input')).toEqual({
      message: 'transition inputs [//command_line_option:no_such_option, //command_line_option:jobs] do not correspond to valid settings',
      where: 'rules/errors.bzl:14',
    });
    expect(errorOf('//bad:on_define').message).toBe(
      'Starlark transition on --define not supported - try using build settings (https://docs.bazel.build/skylark/config.html#user-defined-build-settings).',
    );
    expect(errorOf('//bad:not_setting').message).toBe("attempting to transition on '//app:plain' which is not a build setting");
  });
  it('refuses a split as a rule transition', () => {
    expect(errorOf('//bad:split_incoming')).toEqual({
      message: 'Rule transition only allowed to return a single transitioned configuration.',
      where: 'rules/errors.bzl:49',
    });
  });
  it("converts values with the option's converter and the build setting's type", () => {
    expect(errorOf('//bad:bad_value').message).toBe(
      "OptionsParsingError for option 'compilation_mode': Not a valid compilation mode: 'fast' (should be fastbuild, dbg or opt)",
    );
    expect(errorOf('//bad:bad_type').message).toBe("expected value of type 'string' for //flags:flavor, but got 3 (int)");
  });
});

describe('the internal option analysis_test_transition sets', () => {
  it('is no command-line option', () => {
    expect(() => parseBuildOptions(['--evaluating for analysis test'])).toThrow('Unrecognized option: --evaluating for analysis test');
    expect(() => parseBuildOptions(['--noevaluating for analysis test'])).toThrow('Unrecognized option');
  });
});
