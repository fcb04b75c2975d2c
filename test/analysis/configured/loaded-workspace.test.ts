import { describe, expect, it } from 'vitest';
import { createConfigurations } from '../../../src/analysis/config/build-configuration.js';
import { Analyzer } from '../../../src/analysis/configured/analyzer.js';
import { LoadedTargetGraph } from '../../../src/analysis/configured/loaded-target-graph.js';
import { platformDeclarationsFrom } from '../../../src/analysis/configured/platform-declarations.js';
import { parseBuildOptions } from '../../../src/analysis/options/parse-build-options.js';
import { workspaceFixture } from '../../loading/fixture.js';
import { newLoader } from '../../loading/load-helper.js';
import { LINUX_X64 } from '../config/config-fixture.js';

// The workspace of the Bazel 2.1.0 session these notes were checked against (package a), through
// Kiln's real loader: BUILD files in, configured targets and actions out.
const FILES = {
  WORKSPACE: '',
  'a/s1': '',
  'a/s2': '',
  'a/BUILD': `
config_setting(name = "opt", values = {"compilation_mode": "opt"})
config_setting(name = "k8", values = {"cpu": "k8"})
config_setting(name = "fast", values = {"compilation_mode": "fastbuild"})
config_setting(name = "blue", values = {"cpu": "k8"}, flag_values = {"//flags:color": "blue"})
config_setting(name = "linux", constraint_values = ["@platforms//os:linux"])
filegroup(name = "grp", srcs = ["s1", "s2"], visibility = ["//visibility:public"])
genrule(name = "tool", srcs = ["s1"], outs = ["tool.sh"], cmd = "echo 'echo hi' > $@", executable = True)
genrule(
    name = "usetool",
    srcs = [":grp"],
    outs = ["ut.out"],
    tools = [":tool"],
    cmd = "$(location :tool) $(SRCS) > $@; echo $(location :tool) $(execpath :tool) $(rootpath :tool) >> $@",
)
genrule(
    name = "selconcat",
    outs = ["sc.out"],
    cmd = "echo " + select({":opt": "O", "//conditions:default": "D"}) + " " + select({":k8": "K", "//conditions:default": "N"}) + " > $@",
)
genrule(name = "ambig", outs = ["am"], cmd = select({":k8": "x", ":fast": "y"}))
genrule(name = "color", outs = ["co"], cmd = select({":k8": "k8", ":blue": "blue"}) + " > $@")
genrule(name = "os", outs = ["os.out"], cmd = select({":linux": "linux"}) + " > $@")
alias(name = "al", actual = select({":opt": ":s1", "//conditions:default": ":grp"}))
`,
  'flags/BUILD': 'string_flag(name = "color", build_setting_default = "red", visibility = ["//visibility:public"])\n',
  'b/BUILD': 'filegroup(name = "uses_tool", srcs = ["//a:tool"])\n',
};

function analyzerFor(args: string[]) {
  const root = workspaceFixture(FILES);
  const graph = new LoadedTargetGraph(newLoader(root));
  const configurations = createConfigurations(parseBuildOptions(args).options, { host: LINUX_X64, platforms: platformDeclarationsFrom(graph) });
  return new Analyzer(graph, { configurations, buildSettings: (l) => graph.buildSetting(l) });
}

describe('analysis of a loaded workspace', () => {
  it('genrule with a genrule tool: command and paths match Bazel 2.1.0 up to the output prefix', () => {
    const [action] = analyzerFor([]).analyzeTopLevel('//a:usetool').actions;
    // Bazel: bazel-out/host/bin/a/tool.sh a/s1 a/s2 > bazel-out/k8-fastbuild/bin/a/ut.out; echo <tool> <tool> a/tool.sh >> ...
    expect(action!.argv).toEqual([
      '/bin/bash',
      '-c',
      'set -euo pipefail; bazel-out/k8-opt-exec/bin/a/tool.sh a/s1 a/s2 > bazel-out/k8-fastbuild/bin/a/ut.out; ' +
        'echo bazel-out/k8-opt-exec/bin/a/tool.sh bazel-out/k8-opt-exec/bin/a/tool.sh a/tool.sh >> bazel-out/k8-fastbuild/bin/a/ut.out',
    ]);
    expect(action!.inputs.map((i) => i.execPath)).toEqual(['a/s1', 'a/s2', 'bazel-out/k8-opt-exec/bin/a/tool.sh']);
  });

  it('select() + select() concatenation (Bazel printed "D K" by default)', () => {
    expect(analyzerFor([]).analyzeTopLevel('//a:selconcat').actions[0]!.argv[2]).toBe('set -euo pipefail; echo D K > bazel-out/k8-fastbuild/bin/a/sc.out');
    expect(analyzerFor(['-c', 'opt', '--cpu=arm']).analyzeTopLevel('//a:selconcat').actions[0]!.argv[2]).toBe(
      'set -euo pipefail; echo O N > bazel-out/arm-opt/bin/a/sc.out',
    );
  });

  it('ambiguity in Bazel 2.1.0 words, with the BUILD position', () => {
    let message = '';
    try {
      analyzerFor([]).analyzeTopLevel('//a:ambig');
    } catch (e) {
      message = (e as { format(): string }).format();
    }
    expect(message).toMatch(
      /a\/BUILD:\d+:1: Illegal ambiguous match on configurable attribute "cmd" in \/\/a:ambig:\n\/\/a:k8\n\/\/a:fast\nMultiple matches are not allowed unless one is unambiguously more specialized\.$/,
    );
  });

  it('flag_values with a string_flag: the more specialized setting wins when the flag is set', () => {
    expect(analyzerFor([]).analyzeTopLevel('//a:color').actions[0]!.argv[2]).toContain('; k8 >');
    expect(analyzerFor(['--//flags:color=blue']).analyzeTopLevel('//a:color').actions[0]!.argv[2]).toContain('; blue >');
  });

  it('constraint_values from the built-in @platforms repository match the host platform', () => {
    expect(analyzerFor([]).analyzeTopLevel('//a:os').actions[0]!.argv[2]).toContain('; linux >');
  });

  it('an alias holding a select', () => {
    const paths = (args: string[]) =>
      analyzerFor(args)
        .analyzeTopLevel('//a:al')
        .files.map((f) => f.artifact.execPath);
    expect(paths(['-c', 'opt'])).toEqual(['a/s1']);
    expect(paths([])).toEqual(['a/s1', 'a/s2']);
  });

  it('build settings and constraint targets analyse to no files', () => {
    expect(analyzerFor([]).analyzeTopLevel('//flags:color').files).toEqual([]);
    expect(analyzerFor([]).analyzeTopLevel('@platforms//os:linux').files).toEqual([]);
  });

  it('a private genrule is not visible from another package', () => {
    expect(() => analyzerFor([]).analyzeTopLevel('//b:uses_tool')).toThrow("target '//a:tool' is not visible from target '//b:uses_tool'");
  });
});
