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
    split = ctx.attr.split
    lines = ["%s=%s" % (k, split[k][DefaultInfo].files.to_list()[0].path) for k in sorted(ctx.split_attr.split.keys())] if split else []
    ctx.actions.write(out, "\\n".join([f.path for f in files] + lines + [str(type(ctx.attr.one))]))
    return [DefaultInfo(files = depset([out] + files))]

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
load("//rules:defs.bzl", "collect", "flavored_report", "report")
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
  it('names the directory of a transitioned configuration that equals the command line without a hash', () => {
    const analyzer = analyzerFor(['--//flags:flavor=chocolate']);
    expect(analyzer.analyzeTopLevel('//app:choc').config.mnemonic).toBe('k8-fastbuild');
  });
});
