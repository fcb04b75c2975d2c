import { describe, expect, it } from 'vitest';
import { E2eWorkspace } from './e2e-workspace.js';

const LOCAL = '--spawn_strategy=local';

// Toolchains without exec constraints, so that the host machine running the test does not matter.
const FILES: Record<string, string> = {
  'MODULE.bazel': 'module(name = "tcmod")\nregister_toolchains("//tc:all", dev_dependency = True)\n',
  WORKSPACE: 'register_execution_platforms("//remote:all")  # a comment: register_toolchains("//nowhere:x")\n',
  'plat/BUILD': `
constraint_setting(name = "pool")
constraint_value(name = "big", constraint_setting = ":pool", visibility = ["//visibility:public"])
`,
  // The platform's own package: only toolchain resolution reads it for //a:g.
  'remote/BUILD': 'platform(name = "remote", constraint_values = ["//plat:big"], exec_properties = {"Pool": "big"})\n',
  'rules/BUILD': 'toolchain_type(name = "cc_type", visibility = ["//visibility:public"])\ntoolchain_type(name = "none_type")\n',
  'rules/defs.bzl': `
def _tc_impl(ctx):
    return [platform_common.ToolchainInfo(name = ctx.attr.tool_name)]

fake_toolchain = rule(implementation = _tc_impl, attrs = {"tool_name": attr.string()})

def _uses_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".txt")
    ctx.actions.write(out, ctx.toolchains["//rules:cc_type"].name + "\\n")
    return [DefaultInfo(files = depset([out]))]

uses = rule(implementation = _uses_impl, toolchains = ["//rules:cc_type"])
uses_none = rule(implementation = _uses_impl, toolchains = ["//rules:none_type"])
`,
  'tc/BUILD': `
load("//rules:defs.bzl", "fake_toolchain")
fake_toolchain(name = "impl", tool_name = "cc-one")
toolchain(name = "cc", toolchain_type = "//rules:cc_type", toolchain = ":impl")
`,
  'a/BUILD': `
load("//rules:defs.bzl", "uses", "uses_none")
uses(name = "u")
uses_none(name = "missing")
genrule(name = "g", outs = ["g.txt"], cmd = "echo built > $@", exec_compatible_with = ["//plat:big"])
genrule(name = "g2", outs = ["g2.txt"], cmd = "echo built > $@", exec_compatible_with = ["//plat:big"])
`,
};

describe('kiln build with toolchains and execution platforms', () => {
  it("resolves MODULE.bazel's registered toolchain; an edit of the toolchain reaches its user", async () => {
    const ws = new E2eWorkspace(FILES);
    const run = await ws.kiln(['build', LOCAL, '//a:u']);
    expect(run.code, run.stderr).toBe(0);
    expect(ws.read('kiln-bin/a/u.txt')).toBe('cc-one\n');
    ws.write({ 'tc/BUILD': FILES['tc/BUILD']!.replace('cc-one', 'cc-two') });
    const again = await ws.kiln(['build', LOCAL, '//a:u']);
    expect(again.code, again.stderr).toBe(0);
    expect(ws.read('kiln-bin/a/u.txt')).toBe('cc-two\n');
  });

  it('an edit of the registrations in MODULE.bazel reaches the users of the toolchain, even with everything cached', async () => {
    const ws = new E2eWorkspace({
      ...FILES,
      'tc/BUILD': `${FILES['tc/BUILD']}\nfake_toolchain(name = "impl2", tool_name = "cc-other")\ntoolchain(name = "cc2", toolchain_type = "//rules:cc_type", toolchain = ":impl2")\n`,
      'MODULE.bazel': 'module(name = "tcmod")\nregister_toolchains("//tc:cc")\n',
    });
    expect((await ws.kiln(['build', LOCAL, '//a:u'])).code).toBe(0);
    expect(ws.read('kiln-bin/a/u.txt')).toBe('cc-one\n');
    // Registrations are read from MODULE.bazel outside the package graph: the stored graph and configured targets are keyed by it.
    ws.write({ 'MODULE.bazel': 'module(name = "tcmod")\nregister_toolchains("//tc:cc2", "//tc:cc")\n' });
    const again = await ws.kiln(['build', LOCAL, '//a:u']);
    expect(again.code, again.stderr).toBe(0);
    expect(ws.read('kiln-bin/a/u.txt')).toBe('cc-other\n');
  });

  it("an edit of the execution platform's exec_properties runs cached genrules' actions again", async () => {
    // The platforms are read once per build (during //a:g's analysis); //a:g2 records them as read too.
    const ws = new E2eWorkspace(FILES);
    expect((await ws.kiln(['build', LOCAL, '//a:g', '//a:g2'])).executed).toEqual(['//a:g', '//a:g2']);
    expect((await ws.kiln(['build', LOCAL, '//a:g', '//a:g2'])).executed).toEqual([]);
    ws.write({ 'remote/BUILD': FILES['remote/BUILD']!.replace('{"Pool": "big"}', '{"Pool": "huge"}') });
    const edited = await ws.kiln(['build', LOCAL, '//a:g', '//a:g2']);
    expect(edited.code, edited.stderr).toBe(0);
    expect(edited.executed).toEqual(['//a:g', '//a:g2']);
  });

  it("no matching toolchain: Bazel's error at the target, exit code 1", async () => {
    const ws = new E2eWorkspace(FILES);
    const run = await ws.kiln(['build', LOCAL, '//a:missing']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /ERROR: \S*a\/BUILD:4:1: While resolving toolchains for target \/\/a:missing \([0-9a-f]{7}\): No matching toolchains found for types \/\/rules:none_type\./,
    );
    expect(run.stderr).toContain("To debug, rerun with --toolchain_resolution_debug='//rules:none_type'");
  });

  it('--toolchain_resolution_debug prints INFO lines; --extra_toolchains is no longer a warning', async () => {
    const ws = new E2eWorkspace(FILES);
    const run = await ws.kiln(['build', LOCAL, '--toolchain_resolution_debug=cc_type', '--extra_toolchains=//tc:cc', '//a:u']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('INFO: ToolchainResolution: Performing resolution of //rules:cc_type for target platform');
    expect(run.stderr).toContain('      ToolchainResolution:   Toolchain //tc:impl is compatible with target platform, searching for execution platforms:');
    expect(run.stderr).toMatch(/Selected execution platform \/\/remote:remote, type \/\/rules:cc_type -> toolchain \/\/tc:impl/);
    expect(run.stderr).not.toMatch(/extra_toolchains.*no effect/);
  });
});
