import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Package, Selector, SelectorList } from '../../src/loading/index.js';
import { errorsOf, loadFixture, newLoader, rule } from './load-helper.js';
import { workspaceFixture } from './fixture.js';

/** A decoded package with its (lazily decoded) targets in a plain Map, to compare with the original. */
const withTargetMap = (p: Package): Package => ({ ...p, targets: new Map(p.targets) });

describe('BUILD evaluation', () => {
  it('globs relative to the package, stopping at subpackages, and concatenates select()', () => {
    const { pkg } = loadFixture({
      'pkg/BUILD': 'filegroup(name = "f", srcs = glob(["**/*.txt"], exclude = ["skip.txt"]) + select({"//conditions:default": ["z.txt"]}))\n',
      'pkg/a.txt': '',
      'pkg/skip.txt': '',
      'pkg/d/b.txt': '',
      'pkg/sub/BUILD': '',
      'pkg/sub/c.txt': '',
    });
    expect(errorsOf(pkg)).toEqual([]);
    expect(rule(pkg, 'f').attrs.get('srcs')).toStrictEqual(
      new SelectorList([['//pkg:a.txt', '//pkg:d/b.txt'], new Selector([['//conditions:default', ['//pkg:z.txt']]], '')]),
    );
  });

  it('reports glob errors at the call', () => {
    const { pkg } = loadFixture({ 'pkg/BUILD': 'x = 1\nfilegroup(name = "f", srcs = glob(["a**"]))\n' });
    expect(errorsOf(pkg)).toEqual(["pkg/BUILD:2:34: glob pattern 'a**': recursive wildcard must be its own segment"]);
  });

  it('supports package(), exports_files, package_group, licenses, package_name(), repository_name()', () => {
    const { pkg } = loadFixture({
      'pkg/BUILD': [
        'package(default_visibility = ["//visibility:public"], default_testonly = True)',
        'licenses(["notice"])',
        'exports_files(["a.txt", "b.txt"], visibility = ["//other:__pkg__"])',
        'package_group(name = "friends", packages = ["//pkg/...", "-//pkg/secret"], includes = [":more"])',
        'genrule(name = package_name().replace("/", "_") + repository_name().replace("@", "_main"), outs = ["o"], cmd = "")',
        '',
      ].join('\n'),
    });
    expect(errorsOf(pkg)).toEqual([]);
    expect(pkg.defaults.visibility).toEqual(['//visibility:public']);
    expect(pkg.defaults.testonly).toBe(true);
    expect(pkg.defaults.licenses).toEqual(['notice']);
    expect(pkg.targets.get('a.txt')).toMatchObject({ kind: 'source', visibility: ['//other:__pkg__'] });
    expect(pkg.targets.get('friends')).toMatchObject({ kind: 'package_group', packages: ['//pkg/...', '-//pkg/secret'], includes: ['//pkg:more'] });
    expect(pkg.targets.get('pkg_main')?.kind).toBe('rule');
  });

  it('rejects a second package() call (Bazel wording)', () => {
    const { pkg } = loadFixture({ 'pkg/BUILD': 'package()\npackage()\n' });
    expect(errorsOf(pkg)).toEqual(["pkg/BUILD:2:8: 'package' can only be used once per BUILD file"]);
  });

  it('existing_rule(s) see earlier rules', () => {
    const { pkg } = loadFixture({
      'pkg/BUILD': [
        'genrule(name = "g", outs = ["o"], cmd = "c", tags = ["t"])',
        'r = existing_rule("g")',
        'filegroup(name = "k_" + r["kind"] + "_" + r["cmd"] + "_" + r["tags"][0] + "_" + str(len(existing_rules())))',
        'filegroup(name = "none_" + str(existing_rule("nope")))',
        '',
      ].join('\n'),
    });
    expect(errorsOf(pkg)).toEqual([]);
    expect(pkg.targets.has('k_genrule_c_t_1')).toBe(true);
    expect(pkg.targets.has('none_None')).toBe(true);
  });

  it('records syntax and evaluation errors with positions, keeping earlier targets', () => {
    expect(errorsOf(loadFixture({ 'pkg/BUILD': 'filegroup(name = "a")\nfilegroup(name = \n' }).pkg)[0]).toMatch(/^pkg\/BUILD:3:1: /);
    const { pkg } = loadFixture({ 'pkg/BUILD': 'filegroup(name = "a")\nx = undefined_name\n' });
    expect(errorsOf(pkg)).toEqual(['pkg/BUILD:2:5: undefined: undefined_name']);
    const p2 = loadFixture({ 'pkg/BUILD': 'filegroup(name = "a")\nx = 1 + "a"\nfilegroup(name = "b")\n' }).pkg;
    expect(errorsOf(p2)).toEqual(['pkg/BUILD:2:7: unknown binary op: int + string']);
    expect(p2.targets.has('a')).toBe(true);
  });

  it('fails clearly for a missing package', () => {
    const { loader } = loadFixture({ 'pkg/BUILD': '' });
    expect(() => loader.loadPackage('', 'nope')).toThrow(
      "no such package 'nope': BUILD file not found in any of the following directories. Add a BUILD file to a directory to mark it as a package.\n - nope",
    );
  });

  it('passes print() output on with the position', () => {
    const root = workspaceFixture({ WORKSPACE: '', 'pkg/BUILD': 'filegroup(name = "a")\nprint("hi", 1)\n' });
    const events: string[] = [];
    newLoader(root, events).loadPackage('', 'pkg');
    expect(events).toEqual(['DEBUG: pkg/BUILD:2:1: hi 1']);
  });
});

describe('rule locations from the thread call stack', () => {
  const files = {
    'lib/BUILD': '',
    'lib/defs.bzl': ['def _one(n):', '    native.filegroup(name = n)', 'def gen(name):', '    _one(name)', '    print("made", name)', ''].join('\n'),
  };

  it('locates a rule made inside nested macro calls at the BUILD statement that runs them', () => {
    const root = workspaceFixture({
      WORKSPACE: '',
      ...files,
      'pkg/BUILD': ['load("//lib:defs.bzl", "gen")', 'x = [gen(n) for n in ["a"]]', '', '  # comment', 'gen(name = "b")', ''].join('\n'),
    });
    const events: string[] = [];
    const pkg = newLoader(root, events).loadPackage('', 'pkg');
    expect(errorsOf(pkg)).toEqual([]);
    expect(rule(pkg, 'a')).toMatchObject({ location: { file: 'pkg/BUILD', line: 2, col: 1 } });
    expect(rule(pkg, 'a').generator).toBeUndefined(); // not a call statement: Bazel 2.1 sets no generator_*
    expect(rule(pkg, 'b')).toMatchObject({
      location: { file: 'pkg/BUILD', line: 5, col: 1 },
      generator: { name: 'b', function: 'gen', location: 'pkg/BUILD:5' },
    });
    expect(events.filter((e) => e.includes('made'))).toEqual(['DEBUG: pkg/BUILD:2:1: made a', 'DEBUG: pkg/BUILD:5:1: made b']);
  });

  it('adds no names or statements of its own to a BUILD file', () => {
    const { pkg } = loadFixture({ ...files, 'pkg/BUILD': 'filegroup(name = "a")\nx = __kiln_at__(0)\n' });
    expect(errorsOf(pkg)).toEqual(['pkg/BUILD:2:5: undefined: __kiln_at__']);
  });
});

describe('load()', () => {
  const lib = {
    'lib/BUILD': '',
    'lib/defs.bzl': [
      'load(":consts.bzl", "SUFFIX")',
      'load("//lib/more:m.bzl", _m = "m")',
      'print("defs loaded")',
      'def gen(name, **kwargs):',
      '    native.genrule(name = name, outs = [name + SUFFIX], cmd = _m, **kwargs)',
      'def _impl(ctx):',
      '    pass',
      'Info = provider(fields = ["x"])',
      'my_rule = rule(implementation = _impl, attrs = {"deps": attr.label_list(), "n": attr.int(default = 3), "mode": attr.string(mandatory = True, values = ["a", "b"])})',
      'info = Info(x = 1)',
      'L = Label("//lib:x")',
      'D = depset([1, 2], transitive = [depset([3])])',
      '_private = 1',
      '',
    ].join('\n'),
    'lib/consts.bzl': 'SUFFIX = ".out"\n',
    'lib/more/BUILD': '',
    'lib/more/m.bzl': 'm = "echo"\n',
  };

  it('loads by absolute and relative labels, runs macros with native, evaluates each .bzl once', async () => {
    const root = workspaceFixture({
      WORKSPACE: '',
      ...lib,
      'pkg/BUILD': [
        'load("//lib:defs.bzl", "gen", "my_rule", "info", "L", "D")',
        'gen("a")',
        'gen("b", tags = ["x"])',
        'my_rule(name = "r", deps = [":a"], mode = "a")',
        'filegroup(name = "meta_%d_%s_%s" % (info.x, L.name, str(D.to_list())))',
        '',
      ].join('\n'),
      'pkg2/BUILD': 'load("//lib:defs.bzl", "gen")\ngen("c")\n',
    });
    const events: string[] = [];
    const loader = newLoader(root, events);
    const pkg = loader.loadPackage('', 'pkg');
    loader.loadPackage('', 'pkg2');
    expect(errorsOf(pkg)).toEqual([]);
    // As Bazel 2.1.0 reports it: the rule is located at the outermost BUILD call, with generator_* set.
    expect(rule(pkg, 'a')).toMatchObject({
      ruleClass: 'genrule',
      outputs: ['a.out'],
      location: { file: 'pkg/BUILD', line: 2, col: 1 },
      generator: { name: 'a', function: 'gen', location: 'pkg/BUILD:2' },
    });
    expect(rule(pkg, 'a').attrs.get('outs')).toEqual(['//pkg:a.out']);
    expect(rule(pkg, 'a').attrs.get('cmd')).toBe('echo');
    expect(rule(pkg, 'r')).toMatchObject({ ruleClass: 'my_rule', location: { line: 4, col: 1 }, starlarkDefined: true });
    const { decodePackage, encodePackage } = await import('../../src/loading/package-codec.js');
    expect(withTargetMap(decodePackage(encodePackage(pkg)))).toEqual(pkg);
    expect(rule(pkg, 'r').generator).toBeUndefined();
    expect(pkg.targets.has('meta_1_x_[1, 2, 3]') || pkg.targets.has('meta_1_x_[3, 1, 2]')).toBe(true);
    expect(events.filter((e) => e.includes('defs loaded'))).toHaveLength(1);
  });

  it('checks Starlark rule attributes like native ones', () => {
    const { pkg } = loadFixture({
      ...lib,
      'pkg/BUILD': 'load("//lib:defs.bzl", "my_rule")\nmy_rule(name = "r")\nmy_rule(name = "s", mode = "c")\nmy_rule(name = "t", mode = "a", bogus = 1)\n',
    });
    expect(errorsOf(pkg)).toEqual([
      "pkg/BUILD:2:1: //pkg:r: missing value for mandatory attribute 'mode' in 'my_rule' rule",
      "pkg/BUILD:3:1: //pkg:s: invalid value in 'mode' attribute: has to be one of 'a' or 'b' instead of 'c'",
      // Bazel 2.1.0 also reports a mandatory attribute whose value failed to convert as missing.
      "pkg/BUILD:3:1: //pkg:s: missing value for mandatory attribute 'mode' in 'my_rule' rule",
      "pkg/BUILD:4:1: //pkg:t: no such attribute 'bogus' in 'my_rule' rule",
    ]);
  });

  it('does not export private names', () => {
    const { pkg } = loadFixture({ ...lib, 'pkg/BUILD': 'load("//lib:defs.bzl", "_private")\n' });
    expect(errorsOf(pkg)).toEqual(['pkg/BUILD:1:25: load: names with leading underscores are not exported: _private']);
  });

  it('reports a load cycle with its path', () => {
    const { pkg } = loadFixture({
      'lib/BUILD': '',
      'lib/a.bzl': 'load(":b.bzl", "b")\na = 1\n',
      'lib/b.bzl': 'load(":a.bzl", "a")\nb = 1\n',
      'pkg/BUILD': 'load("//lib:a.bzl", "a")\n',
    });
    expect(errorsOf(pkg)).toEqual(['lib/b.bzl:1:6: cannot load :a.bzl: cycle detected in extension files: //lib:a.bzl -> //lib:b.bzl -> //lib:a.bzl']);
  });

  it('reports missing files, missing packages and bad labels at the load', () => {
    const p1 = loadFixture({ 'lib/BUILD': '', 'pkg/BUILD': 'load("//lib:nope.bzl", "x")\n' }).pkg;
    expect(errorsOf(p1)).toEqual(["pkg/BUILD:1:6: cannot load //lib:nope.bzl: no such file 'lib/nope.bzl'"]);
    const p2 = loadFixture({ 'lib/x.bzl': '', 'pkg/BUILD': 'load("//lib:x.bzl", "x")\n' }).pkg;
    expect(errorsOf(p2)[0]).toContain('cannot load //lib:x.bzl: Unable to find package for //lib:x.bzl: BUILD file not found');
    const p3 = loadFixture({ 'pkg/BUILD': 'load("//lib:x.txt", "x")\n' }).pkg;
    expect(errorsOf(p3)).toEqual(["pkg/BUILD:1:6: cannot load //lib:x.txt: The label must reference a file with extension '.bzl'"]);
  });

  it('refuses native rule calls at .bzl top level', () => {
    const { pkg } = loadFixture({ 'lib/BUILD': '', 'lib/x.bzl': 'native.genrule(name = "g", outs = ["o"])\n', 'pkg/BUILD': 'load("//lib:x.bzl", "y")\n' });
    expect(errorsOf(pkg)[0]).toContain('genrule() can only be used while evaluating a BUILD file');
  });
});

describe('built-in repositories', () => {
  it('provides @platforms constraints and @bazel_skylib common_settings', () => {
    const { pkg, loader } = loadFixture({
      'pkg/BUILD': [
        'load("@bazel_skylib//rules:common_settings.bzl", "string_flag", "bool_flag", "BuildSettingInfo")',
        'string_flag(name = "mode", build_setting_default = "fast", values = ["fast", "slow"])',
        'bool_flag(name = "on", build_setting_default = False)',
        'config_setting(name = "linux", constraint_values = ["@platforms//os:linux"])',
        '',
      ].join('\n'),
    });
    expect(errorsOf(pkg)).toEqual([]);
    const os = loader.loadPackage('platforms', 'os');
    expect(errorsOf(os)).toEqual([]);
    expect(rule(os, 'linux')).toMatchObject({ ruleClass: 'constraint_value' });
    expect(rule(os, 'linux').attrs.get('constraint_setting')).toBe('@platforms//os:os');
    expect(rule(loader.loadPackage('platforms', 'cpu'), 'x86_64').ruleClass).toBe('constraint_value');
    expect(() => loader.loadPackage('nope', '')).toThrow("No repository visible as '@nope' from main repository");
  });
});

describe('incremental loading', () => {
  it('reuses cached packages until the BUILD file, a loaded .bzl or a globbed listing changes', () => {
    const root = workspaceFixture({
      WORKSPACE: '',
      'lib/BUILD': '',
      'lib/defs.bzl': 'def gen(name):\n    native.filegroup(name = name, srcs = native.glob(["*.txt"]))\n',
      'pkg/BUILD': 'load("//lib:defs.bzl", "gen")\ngen("f")\n',
      'pkg/a.txt': '',
      'other/BUILD': 'filegroup(name = "o")\n',
    });
    const run = () => {
      const loader = newLoader(root);
      const p = loader.loadPackage('', 'pkg');
      loader.loadPackage('', 'other');
      loader.flush();
      return { srcs: rule(p, 'f').attrs.get('srcs'), stats: { ...loader.stats } };
    };
    expect(run()).toEqual({ srcs: ['//pkg:a.txt'], stats: { computed: 3, reusedFromStore: 0, recomputedUnchanged: 0 } });
    expect(run()).toEqual({ srcs: ['//pkg:a.txt'], stats: { computed: 0, reusedFromStore: 2, recomputedUnchanged: 0 } });

    writeFileSync(join(root, 'pkg/b.txt'), ''); // a listing the glob read changed
    expect(run()).toEqual({ srcs: ['//pkg:a.txt', '//pkg:b.txt'], stats: { computed: 2, reusedFromStore: 1, recomputedUnchanged: 0 } });

    writeFileSync(join(root, 'lib/defs.bzl'), 'def gen(name):\n    native.filegroup(name = name, srcs = ["x"])\n');
    expect(run()).toEqual({ srcs: ['//pkg:x'], stats: { computed: 2, reusedFromStore: 1, recomputedUnchanged: 0 } });

    writeFileSync(join(root, 'other/BUILD'), 'filegroup(name = "o2")\n');
    expect(run().stats).toEqual({ computed: 1, reusedFromStore: 1, recomputedUnchanged: 0 });

    // A damaged cache file is a cold cache, never an error; the run writes a good one again.
    const cacheFile = join(root, '.kiln-output-base', 'loading', 'packages.bin');
    const bytes = readFileSync(cacheFile);
    bytes[bytes.length - 5]! ^= 0xff;
    writeFileSync(cacheFile, bytes);
    expect(run()).toEqual({ srcs: ['//pkg:x'], stats: { computed: 3, reusedFromStore: 0, recomputedUnchanged: 0 } });
    expect(run().stats).toEqual({ computed: 0, reusedFromStore: 2, recomputedUnchanged: 0 });
  });
});

describe('cached packages after a //... walk', () => {
  it('checks a package against the listings the walk read, and recomputes it when one changed', () => {
    const root = workspaceFixture({ WORKSPACE: '', 'pkg/BUILD': 'filegroup(name = "f", srcs = glob(["**/*.txt"]))\n', 'pkg/a.txt': '', 'pkg/sub/b.txt': '' });
    const run = () => {
      const loader = newLoader(root);
      expect(loader.workspace.packagesUnder('')).toEqual(['pkg']);
      const p = loader.loadPackage('', 'pkg');
      loader.flush();
      return { srcs: rule(p, 'f').attrs.get('srcs'), stats: { ...loader.stats } };
    };
    expect(run()).toEqual({ srcs: ['//pkg:a.txt', '//pkg:sub/b.txt'], stats: { computed: 1, reusedFromStore: 0, recomputedUnchanged: 0 } });
    expect(run()).toEqual({ srcs: ['//pkg:a.txt', '//pkg:sub/b.txt'], stats: { computed: 0, reusedFromStore: 1, recomputedUnchanged: 0 } });
    writeFileSync(join(root, 'pkg/sub/c.txt'), '');
    expect(run()).toEqual({ srcs: ['//pkg:a.txt', '//pkg:sub/b.txt', '//pkg:sub/c.txt'], stats: { computed: 1, reusedFromStore: 0, recomputedUnchanged: 0 } });
    expect(run().stats).toEqual({ computed: 0, reusedFromStore: 1, recomputedUnchanged: 0 });
  });
});

describe('BUILD dialect', () => {
  // Messages and positions as Bazel 2.1.0 printed them for this file.
  it('rejects def and *args / **kwargs in BUILD files', () => {
    const { pkg } = loadFixture({ 'pkg/BUILD': 'def f():\n    pass\nfilegroup(*[], **{"name": "x"})\n' });
    expect(errorsOf(pkg)).toEqual([
      'pkg/BUILD:1:1: function definitions are not allowed in BUILD files. You may move the function to a .bzl file and load it.',
      'pkg/BUILD:3:1: *args arguments are not allowed in BUILD files. Pass the arguments in explicitly.',
      'pkg/BUILD:3:1: **kwargs arguments are not allowed in BUILD files. Pass the arguments in explicitly.',
    ]);
    expect(pkg.targets.has('x')).toBe(false);
  });
});

describe('package cache encoding', () => {
  it('round-trips every target kind through the binary record', async () => {
    const { decodePackage, encodePackage } = await import('../../src/loading/package-codec.js');
    const { pkg } = loadFixture({
      'lib/BUILD': '',
      'lib/m.bzl':
        'def m(name):\n    native.genrule(name = name, outs = [name + ".o"], cmd = "c", srcs = select({"//pkg:c": ["a"], "//conditions:default": []}))\n',
      'pkg/BUILD': [
        'load("//lib:m.bzl", "m")',
        'm("g")',
        'exports_files(["e.txt"], visibility = ["//visibility:public"])',
        'package_group(name = "pg", packages = ["//pkg/..."], includes = [":pg2"])',
        'config_setting(name = "c", values = {"cpu": "k8"}, visibility = [":pg"])',
        '',
      ].join('\n'),
    });
    expect(errorsOf(pkg)).toEqual([]);
    const again = decodePackage(encodePackage(pkg));
    expect(withTargetMap(again)).toEqual(pkg);
    expect(rule(again, 'c').dependencies).toEqual(['//pkg:pg']);
    expect(rule(again, 'g').dependencies).toEqual(['//pkg:c', '//pkg:a']);
  });
});
