import { describe, expect, it } from 'vitest';
import { createConfigurations } from '../../../src/analysis/config/build-configuration.js';
import { Analyzer } from '../../../src/analysis/configured/analyzer.js';
import { LoadedTargetGraph } from '../../../src/analysis/configured/loaded-target-graph.js';
import { platformDeclarationsFrom } from '../../../src/analysis/configured/platform-declarations.js';
import { parseBuildOptions } from '../../../src/analysis/options/parse-build-options.js';
import { workspaceFixture } from '../../loading/fixture.js';
import { newLoader } from '../../loading/load-helper.js';
import { LINUX_X64 } from '../config/config-fixture.js';

// Execution platforms in priority order: remote_arm, remote_x86 (registered), then the host
// (linux x86_64). Toolchains of //rules:compiler_type in registration order: opt_only, osx, choco,
// linux_x86, linux_arm (`//tc:all` keeps declaration order).
const FILES: Record<string, string> = {
  WORKSPACE:
    'workspace(name = "tcws")\nregister_toolchains("//tc:all")\nregister_execution_platforms(\n    "//plat:remote_arm",\n    "//plat:remote_x86",\n)\n',
  'plat/BUILD': `
constraint_setting(name = "flavor", default_constraint_value = ":vanilla")
constraint_value(name = "vanilla", constraint_setting = ":flavor")
constraint_value(name = "chocolate", constraint_setting = ":flavor")
platform(
    name = "remote_arm",
    constraint_values = ["@platforms//os:linux", "@platforms//cpu:aarch64"],
    exec_properties = {"container-image": "docker://arm", "Pool": "arm"},
)
platform(
    name = "remote_x86",
    constraint_values = ["@platforms//os:linux", "@platforms//cpu:x86_64"],
    exec_properties = {"container-image": "docker://x86"},
)
platform(name = "target_osx", constraint_values = ["@platforms//os:osx", "@platforms//cpu:aarch64"])
platform(name = "target_linux", constraint_values = ["@platforms//os:linux", "@platforms//cpu:x86_64"])
platform(name = "choco_linux", parents = [":target_linux"], constraint_values = [":chocolate"])
`,
  'rules/BUILD': `
toolchain_type(name = "compiler_type", visibility = ["//visibility:public"])
toolchain_type(name = "linter_type", visibility = ["//visibility:public"])
toolchain_type(name = "nothing_type", visibility = ["//visibility:public"])
`,
  'rules/defs.bzl': `
def _fake_toolchain_impl(ctx):
    return [platform_common.ToolchainInfo(name = ctx.attr.tool_name)]

fake_toolchain = rule(implementation = _fake_toolchain_impl, attrs = {"tool_name": attr.string()})

def _uses_impl(ctx):
    tc = ctx.toolchains["//rules:compiler_type"]
    lint = ctx.toolchains["//rules:linter_type"]
    out = ctx.actions.declare_file(ctx.label.name + ".txt")
    ctx.actions.run_shell(outputs = [out], command = "echo %s %s > %s" % (tc.name, lint.name if lint else "none", out.path))
    return [DefaultInfo(files = depset([out]))]

uses = rule(
    implementation = _uses_impl,
    toolchains = ["//rules:compiler_type", config_common.toolchain_type("//rules:linter_type", mandatory = False)],
)

uses_missing = rule(implementation = _uses_impl, toolchains = [":nothing_type"])

def _has_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".txt")
    osx = ctx.target_platform_has_constraint(ctx.attr._osx[platform_common.ConstraintValueInfo])
    ctx.actions.write(out, "osx=%s" % osx)
    return [DefaultInfo(files = depset([out]))]

has_osx = rule(implementation = _has_impl, attrs = {"_osx": attr.label(default = "@platforms//os:osx")})

def _vars_impl(ctx):
    return [platform_common.TemplateVariableInfo({"CC": ctx.attr.cc})]

make_vars = rule(implementation = _vars_impl, attrs = {"cc": attr.string()})

def _grouped_impl(ctx):
    lint = ctx.exec_groups["link"].toolchains["//rules:linter_type"]
    a = ctx.actions.declare_file(ctx.label.name + ".a")
    b = ctx.actions.declare_file(ctx.label.name + ".b")
    ctx.actions.run_shell(outputs = [a], command = "echo %s > %s" % (ctx.toolchains["//rules:compiler_type"].name, a.path))
    ctx.actions.run_shell(outputs = [b], command = "echo %s > %s" % (lint.name, b.path), exec_group = "link")
    if ctx.attr.bad_group:
        ctx.exec_groups["nope"]
    return [DefaultInfo(files = depset([a, b]))]

grouped = rule(
    implementation = _grouped_impl,
    toolchains = ["//rules:compiler_type"],
    exec_groups = {"link": exec_group(toolchains = ["//rules:linter_type"], exec_compatible_with = ["@platforms//cpu:x86_64"])},
    attrs = {"bad_group": attr.bool()},
)
`,
  'tc/BUILD': `
load("//rules:defs.bzl", "fake_toolchain")
config_setting(name = "is_opt", values = {"compilation_mode": "opt"})
fake_toolchain(name = "opt_impl", tool_name = "gcc-opt")
fake_toolchain(name = "osx_impl", tool_name = "clang-osx")
fake_toolchain(name = "choco_impl", tool_name = "choco")
fake_toolchain(name = "x86_impl", tool_name = "gcc-on-x86")
fake_toolchain(name = "arm_impl", tool_name = "gcc-on-arm")
toolchain(name = "opt_only", toolchain_type = "//rules:compiler_type", toolchain = ":opt_impl", target_settings = [":is_opt"])
toolchain(name = "osx", toolchain_type = "//rules:compiler_type", toolchain = ":osx_impl", target_compatible_with = ["@platforms//os:osx"])
toolchain(name = "choco", toolchain_type = "//rules:compiler_type", toolchain = ":choco_impl", target_compatible_with = ["//plat:chocolate"])
toolchain(
    name = "linux_x86",
    toolchain_type = "//rules:compiler_type",
    toolchain = ":x86_impl",
    exec_compatible_with = ["@platforms//cpu:x86_64"],
    target_compatible_with = ["@platforms//os:linux"],
)
toolchain(
    name = "linux_arm",
    toolchain_type = "//rules:compiler_type",
    toolchain = ":arm_impl",
    exec_compatible_with = ["@platforms//cpu:aarch64"],
    target_compatible_with = ["@platforms//os:linux"],
)
`,
  'extra/BUILD': `
load("//rules:defs.bzl", "fake_toolchain")
fake_toolchain(name = "any_impl", tool_name = "extra-cc")
fake_toolchain(name = "lint_impl", tool_name = "lint")
toolchain(name = "any", toolchain_type = "//rules:compiler_type", toolchain = ":any_impl")
toolchain(name = "lint", toolchain_type = "//rules:linter_type", toolchain = ":lint_impl")
filegroup(name = "not_a_toolchain")
`,
  'a/BUILD': `
load("//rules:defs.bzl", "grouped", "has_osx", "make_vars", "uses", "uses_missing")
grouped(name = "grp", exec_properties = {"Pool": "all", "link.Pool": "linkpool"})
grouped(name = "bad_grp", bad_group = True)
uses(name = "u")
uses(name = "u_x86", exec_compatible_with = ["@platforms//cpu:x86_64"], exec_properties = {"Pool": "big"})
uses_missing(name = "missing")
has_osx(name = "has")
make_vars(name = "vars", cc = "my-cc")
genrule(name = "g", outs = ["g.txt"], cmd = "$(CC) > $@", toolchains = [":vars"])
genrule(name = "g_x86", outs = ["gx.txt"], cmd = "true > $@", exec_compatible_with = ["@platforms//cpu:x86_64"])
genrule(name = "g_none", outs = ["gn.txt"], cmd = "true > $@", exec_compatible_with = ["@platforms//os:osx"])
`,
};

function analyzerFor(args: string[], files: Record<string, string> = FILES) {
  const root = workspaceFixture(files);
  const graph = new LoadedTargetGraph(newLoader(root));
  const configurations = createConfigurations(parseBuildOptions(args).options, { host: LINUX_X64, platforms: platformDeclarationsFrom(graph) });
  const info: string[] = [];
  const analyzer = new Analyzer(graph, { configurations, buildSettings: (l) => graph.buildSetting(l), info: (m) => info.push(m) });
  return { analyzer, info };
}

/** The command of a target's single action and its platform properties. */
function actionOf(args: string[], label: string, files?: Record<string, string>) {
  const [action] = analyzerFor(args, files).analyzer.analyzeTopLevel(label).actions;
  return { command: action!.argv.join(' '), platform: action!.execProperties };
}

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('no error');
}

describe('toolchain resolution', () => {
  it('picks the first registered toolchain for the first execution platform that has every mandatory type', () => {
    // linux_x86 comes first but needs an x86 exec platform; remote_arm (first) gets linux_arm.
    const { command, platform } = actionOf([], '//a:u');
    expect(command).toContain('echo gcc-on-arm none >');
    expect(platform).toEqual({ 'container-image': 'docker://arm', Pool: 'arm' });
  });

  it("a target's exec_compatible_with narrows its execution platforms; its exec_properties override the platform's", () => {
    const { command, platform } = actionOf([], '//a:u_x86');
    expect(command).toContain('echo gcc-on-x86 none >');
    expect(platform).toEqual({ 'container-image': 'docker://x86', Pool: 'big' });
  });

  it('target_compatible_with against --platforms, with a constraint_setting default for the platforms that set none', () => {
    expect(actionOf(['--platforms=//plat:target_osx'], '//a:u').command).toContain('echo clang-osx none >');
    // target_linux has //plat:vanilla by default, so the chocolate toolchain is skipped ...
    expect(actionOf(['--platforms=//plat:target_linux'], '//a:u').command).toContain('echo gcc-on-arm none >');
    // ... and a child platform that sets chocolate gets it (registered before the linux ones).
    expect(actionOf(['--platforms=//plat:choco_linux'], '//a:u').command).toContain('echo choco none >');
  });

  it('target_settings: a toolchain whose config_settings do not match is skipped', () => {
    expect(actionOf(['-c', 'opt'], '//a:u').command).toContain('echo gcc-opt none >');
  });

  it('--extra_toolchains come before the registered ones; an optional type resolves when a toolchain exists', () => {
    expect(actionOf(['--extra_toolchains=//extra:any'], '//a:u').command).toContain('echo extra-cc none >');
    expect(actionOf(['--extra_toolchains=//extra:lint'], '//a:u').command).toContain('echo gcc-on-arm lint >');
    expect(actionOf(['--extra_toolchains=//extra:all'], '//a:u').command).toContain('echo extra-cc lint >');
  });

  it('--extra_execution_platforms come first; the host platform last', () => {
    const { command, platform } = actionOf(['--extra_execution_platforms=//plat:remote_x86'], '//a:u');
    expect(command).toContain('echo gcc-on-x86 none >');
    expect(platform).toEqual({ 'container-image': 'docker://x86' });
    // Nothing registered: the host platform, which has no exec_properties.
    const bare = { ...FILES, WORKSPACE: 'register_toolchains("//tc/...")\n' };
    const host = actionOf([], '//a:u', bare);
    expect(host.command).toContain('echo gcc-on-x86 none >');
    expect(host.platform).toBeUndefined();
  });

  it("no toolchain of a mandatory type: Bazel's error", () => {
    const { analyzer } = analyzerFor([]);
    const message = errorOf(() => analyzer.analyzeTopLevel('//a:missing'));
    expect(message).toMatch(
      /^While resolving toolchains for target \/\/a:missing \([0-9a-f]{7}\): No matching toolchains found for types \/\/rules:nothing_type\./,
    );
    expect(message).toContain("\nTo debug, rerun with --toolchain_resolution_debug='//rules:nothing_type'");
    expect(message).toContain('\nFor more information on platforms or toolchains see https://bazel.build/concepts/platforms-intro.');
  });

  it('exec_compatible_with leaving no platform a toolchain runs on; no execution platform at all', () => {
    // Only linux_arm applies to x86 execution, which u_x86 requires: it is compatible on remote_arm only.
    const files = { ...FILES, WORKSPACE: 'register_toolchains("//tc:linux_arm")\nregister_execution_platforms("//plat:remote_arm", "//plat:remote_x86")\n' };
    const message = errorOf(() => analyzerFor([], files).analyzer.analyzeTopLevel('//a:u_x86'));
    expect(message).toContain('No matching toolchains found for types //rules:compiler_type.');
    expect(errorOf(() => analyzerFor([]).analyzer.analyzeTopLevel('//a:g_none'))).toMatch(
      /Unable to find an execution platform for target platform @local_config_platform\/\/:host from available execution platforms \[\]$/,
    );
  });

  it('registrations naming a target that is not a toolchain or platform are errors; patterns skip them', () => {
    const files = { ...FILES, WORKSPACE: 'register_toolchains("//extra:not_a_toolchain")\n' };
    expect(errorOf(() => analyzerFor([], files).analyzer.analyzeTopLevel('//a:u'))).toBe(
      "invalid registered toolchain '//extra:not_a_toolchain': target does not provide the DeclaredToolchainInfo provider",
    );
    expect(actionOf(['--extra_toolchains=//extra:all'], '//a:u').command).toContain('extra-cc');
  });

  it('genrule: exec_compatible_with chooses the execution platform, whose exec_properties the action carries', () => {
    expect(actionOf([], '//a:g_x86').platform).toEqual({ 'container-image': 'docker://x86' });
    expect(actionOf([], '//a:g').platform).toEqual({ 'container-image': 'docker://arm', Pool: 'arm' });
  });

  it("genrule's toolchains attribute reads a Starlark rule's TemplateVariableInfo", () => {
    expect(actionOf([], '//a:g').command).toContain('my-cc > bazel-out/');
  });

  it('ctx.target_platform_has_constraint', () => {
    const content = (args: string[]) => {
      const [action] = analyzerFor(args).analyzer.analyzeTopLevel('//a:has').actions;
      return action!.inProcess?.kind === 'write' ? action!.inProcess.content : undefined;
    };
    expect(content([])).toBe('osx=False');
    expect(content(['--platforms=//plat:target_osx'])).toBe('osx=True');
  });

  it('exec groups: their own toolchains and execution platform; `group.NAME` exec_properties belong to the group', () => {
    const actions = analyzerFor(['--extra_toolchains=//extra:lint']).analyzer.analyzeTopLevel('//a:grp').actions;
    expect(actions.map((a) => a.argv.join(' ').replace(/ > .*/, ''))).toEqual(['/bin/bash -c echo gcc-on-arm', '/bin/bash -c echo lint']);
    expect(actions[0]!.execProperties).toEqual({ 'container-image': 'docker://arm', Pool: 'all' });
    expect(actions[1]!.execProperties).toEqual({ 'container-image': 'docker://x86', Pool: 'linkpool' });
    // The group's mandatory linter type has no toolchain without --extra_toolchains.
    expect(errorOf(() => analyzerFor([]).analyzer.analyzeTopLevel('//a:grp'))).toContain('No matching toolchains found for types //rules:linter_type.');
    expect(errorOf(() => analyzerFor(['--extra_toolchains=//extra:lint']).analyzer.analyzeTopLevel('//a:bad_grp'))).toContain(
      "In //a:bad_grp, unrecognized exec group 'nope' requested. Available exec groups: [link]",
    );
  });

  it('--toolchain_resolution_debug prints Bazel-style lines for matching types', () => {
    const { analyzer, info } = analyzerFor(['--toolchain_resolution_debug=compiler_type']);
    analyzer.analyzeTopLevel('//a:u');
    const text = info.join('\n');
    expect(text).toContain('ToolchainResolution: Performing resolution of //rules:compiler_type for target platform @local_config_platform//:host');
    expect(text).toContain('      ToolchainResolution:   Rejected toolchain //tc:opt_impl; mismatching config settings: is_opt');
    expect(text).toContain('      ToolchainResolution:   Rejected toolchain //tc:osx_impl; mismatching values: macos');
    expect(text).toContain('      ToolchainResolution:   Rejected toolchain //tc:choco_impl; mismatching values: chocolate');
    expect(text).toContain('      ToolchainResolution:     Incompatible execution platform //plat:remote_arm; mismatching values: x86_64');
    expect(text).toContain('      ToolchainResolution:   Selected //tc:arm_impl to run on execution platform //plat:remote_arm');
    expect(text).toContain(
      'ToolchainResolution: Target platform @local_config_platform//:host: Selected execution platform //plat:remote_arm, type //rules:compiler_type -> toolchain //tc:arm_impl',
    );
    expect(text).not.toContain('linter_type for target platform');
    // The default matches nothing.
    const quiet = analyzerFor([]);
    quiet.analyzer.analyzeTopLevel('//a:u');
    expect(quiet.info).toEqual([]);
  });
});
