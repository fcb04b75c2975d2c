import { describe, expect, it } from 'vitest';
import { createConfigurations } from '../../../src/analysis/config/build-configuration.js';
import { Analyzer } from '../../../src/analysis/configured/analyzer.js';
import { LoadedTargetGraph } from '../../../src/analysis/configured/loaded-target-graph.js';
import { platformDeclarationsFrom } from '../../../src/analysis/configured/platform-declarations.js';
import { parseBuildOptions } from '../../../src/analysis/options/parse-build-options.js';
import { workspaceFixture } from '../../loading/fixture.js';
import { newLoader } from '../../loading/load-helper.js';
import { LINUX_X64 } from '../config/config-fixture.js';

const FILES = {
  WORKSPACE: '',
  'a/BUILD': `
genrule(
    name = "os",
    outs = ["os.out"],
    cmd = "echo " + select({
        "@bazel_tools//src/conditions:darwin": "mac",
        "@bazel_tools//src/conditions:host_windows": "windows",
        "@bazel_tools//src/conditions:linux_aarch64": "arm",
        "@bazel_tools//src/conditions:linux_x86_64": "linux-x86_64",
        "//conditions:default": "other",
    }) + " > $@",
)
sh_binary(name = "tool", srcs = ["tool.sh"], deps = ["@bazel_tools//tools/bash/runfiles"])
load(":defs.bzl", "with_transition")
with_transition(name = "tr")
toolchain(name = "tc", toolchain_type = "@bazel_tools//tools/sh:toolchain_type", toolchain = ":tool", exec_compatible_with = ["@platforms//os:linux"])
`,
  'a/defs.bzl': `
def _impl(ctx):
    return []
_t = transition(implementation = lambda settings, attr: {}, inputs = [], outputs = [])
with_transition = rule(
    implementation = _impl,
    cfg = _t,
    attrs = {"_allowlist_function_transition": attr.label(default = "@bazel_tools//tools/allowlists/function_transition_allowlist")},
)
`,
  'a/tool.sh': '',
};

function analyzer() {
  const graph = new LoadedTargetGraph(newLoader(workspaceFixture(FILES)));
  const configurations = createConfigurations(parseBuildOptions([]).options, { host: LINUX_X64, platforms: platformDeclarationsFrom(graph) });
  return new Analyzer(graph, { configurations, buildSettings: (l) => graph.buildSetting(l) });
}

describe('@bazel_tools in analysis', () => {
  it('src/conditions config_settings match the platform by its @platforms constraints', () => {
    expect(analyzer().analyzeTopLevel('//a:os').actions[0]!.argv[2]).toContain('echo linux-x86_64 >');
  });

  it('the Bash runfiles library joins the runfiles of what depends on it', () => {
    const bin = analyzer().analyzeTopLevel('//a:tool');
    expect(bin.runfiles.map((f) => f.artifact.execPath)).toContain('external/bazel_tools/tools/bash/runfiles/runfiles.bash');
  });

  it('a rule may name the function transition allowlist, a package group, in its _allowlist_function_transition attribute', () => {
    expect(analyzer().analyzeTopLevel('//a:tr').files).toEqual([]);
  });

  it('toolchain_type and toolchain targets analyse to no files (toolchain resolution reads them)', () => {
    expect(analyzer().analyzeTopLevel('@bazel_tools//tools/sh:toolchain_type').files).toEqual([]);
    expect(analyzer().analyzeTopLevel('//a:tc').files).toEqual([]);
  });
});
