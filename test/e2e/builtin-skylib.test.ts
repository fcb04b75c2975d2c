import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace } from './e2e-workspace.js';

const LOCAL = '--spawn_strategy=local';

const FILES = {
  WORKSPACE: '',
  BUILD: `
load("@bazel_skylib//rules:common_settings.bzl", "bool_flag", "string_flag")
load("@bazel_skylib//lib:selects.bzl", "selects")
load("@bazel_skylib//:bzl_library.bzl", "bzl_library")
load(":defs.bzl", "show")
string_flag(name = "mode", build_setting_default = "fast", values = ["fast", "slow", "tiny"])
bool_flag(name = "loud", build_setting_default = False)
config_setting(name = "slow", values = {"compilation_mode": "fastbuild"}, flag_values = {":mode": "slow"})
config_setting(name = "tiny", values = {"compilation_mode": "fastbuild"}, flag_values = {":mode": "tiny"})
config_setting(name = "loud_on", values = {"compilation_mode": "fastbuild"}, flag_values = {":loud": "true"})
selects.config_setting_group(name = "slow_or_tiny", match_any = [":slow", ":tiny"])
selects.config_setting_group(name = "slow_and_loud", match_all = [":slow", ":loud_on"])
show(
    name = "show",
    flags = [":mode", ":loud"],
    text = selects.with_or({(":slow", ":tiny"): "careful", "//conditions:default": "quick"}) + "," +
           select({":slow_or_tiny": "any", "//conditions:default": "none"}) + "," +
           select({":slow_and_loud": "all", "//conditions:default": "not-all"}),
)
bzl_library(name = "defs", srcs = ["defs.bzl"], deps = ["@bazel_skylib//lib:paths"])
genrule(name = "copy", srcs = ["@bazel_skylib//lib:paths.bzl"], outs = ["paths.copy"], cmd = "head -c 14 $< > $@")
`,
  'defs.bzl': `
load("@bazel_skylib//rules:common_settings.bzl", "BuildSettingInfo")
load("@bazel_skylib//lib:paths.bzl", "paths")
def _show(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".txt")
    values = [str(f[BuildSettingInfo].value) for f in ctx.attr.flags]
    ctx.actions.write(out, ",".join(values) + ":" + ctx.attr.text + "\\n")
    print(paths.join("a", "b/c"), paths.basename("x/y.txt"), paths.dirname("x/y.txt"), paths.normalize("a/./b/../c"),
          paths.relativize("a/b/c", "a"), paths.split_extension("d/f.tar"), paths.replace_extension("f.c", ".o"), paths.is_absolute("/x"))
    return [DefaultInfo(files = depset([out]))]
show = rule(implementation = _show, attrs = {"flags": attr.label_list(), "text": attr.string()})
`,
};

describe('the built-in @bazel_skylib', () => {
  it('common_settings flags, selects.with_or, config_setting_group, paths', async () => {
    const ws = new E2eWorkspace(FILES);
    const plain = await ws.kiln(['build', LOCAL, '//:show']);
    expect(plain.code, plain.stderr).toBe(0);
    expect(ws.read('kiln-bin/show.txt')).toBe('fast,False:quick,none,not-all\n');
    expect(plain.stderr).toContain('DEBUG: defs.bzl:8:5: a/b/c y.txt x a/c b/c ("d/f", ".tar") f.o True');
    expect((await ws.kiln(['build', LOCAL, '--//:mode=tiny', '//:show'])).code).toBe(0);
    expect(ws.read('kiln-bin/show.txt')).toBe('tiny,False:careful,any,not-all\n');
    expect((await ws.kiln(['build', LOCAL, '--//:mode=slow', '--//:loud', '//:show'])).code).toBe(0);
    expect(ws.read('kiln-bin/show.txt')).toBe('slow,True:careful,any,all\n');
    const bad = await ws.kiln(['build', LOCAL, '--//:mode=huge', '//:show']);
    expect(bad.code).toBe(1);
    // string_flag's implementation rejects the value (Bazel leaves `values` to the rule), in skylib's words.
    expect(bad.stderr).toMatch(
      /^ERROR: \S+: in string_flag rule \/\/:mode: .*Error setting \/\/:mode: invalid value 'huge'. Allowed values are \["fast", "slow", "tiny"\]/m,
    );
  });

  it('bzl_library collects .bzl files; sources of @bazel_skylib are action inputs under external/', async () => {
    const ws = new E2eWorkspace(FILES);
    const run = await ws.kiln(['build', LOCAL, '//:defs', '//:copy']);
    expect(run.code, run.stderr).toBe(0);
    expect(ws.read('kiln-bin/paths.copy')).toBe('"""Skylib modu');
  });

  it("a workspace's own bazel_skylib (local_repository) wins over the built-in one", async () => {
    const ws = new E2eWorkspace({
      ...FILES,
      WORKSPACE: 'local_repository(name = "bazel_skylib", path = "third_party/skylib")\n',
      BUILD: 'load("@bazel_skylib//lib:paths.bzl", "paths")\nprint(paths.mine)\nfilegroup(name = "x")\n',
    });
    const dir = join(ws.root, 'third_party/skylib');
    mkdirSync(join(dir, 'lib'), { recursive: true });
    writeFileSync(join(dir, 'WORKSPACE'), '');
    writeFileSync(join(dir, 'lib/BUILD'), '');
    writeFileSync(join(dir, 'lib/paths.bzl'), 'paths = struct(mine = "vendored")\n');
    const run = await ws.kiln(['build', LOCAL, '//:x']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('vendored');
  });
});
