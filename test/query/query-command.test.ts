import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/commands/query.js';
import type { CliIO } from '../../src/cli/io.js';
import { parseTargetPattern } from '../../src/query/index.js';
import { workspaceFixture } from '../loading/fixture.js';

async function query(root: string, args: string[], cwd = root): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIO = { stdout: { write: (c) => (out += String(c)) }, stderr: { write: (c) => (err += String(c)) }, cwd, env: {} };
  const code = await main([`--output_base=${join(root, '.ob')}`, ...args], io);
  return { code, out, err };
}

const WS = {
  WORKSPACE: 'workspace(name = "ws")\n',
  BUILD: 'filegroup(name = "top")\n',
  'lib/BUILD': '',
  'lib/defs.bzl': 'def gen(name):\n    native.genrule(name = name, outs = [name + ".out"], cmd = "touch $@")\n',
  'a/BUILD': [
    'load("//lib:defs.bzl", "gen")',
    'gen("g")',
    'filegroup(name = "fg", srcs = ["x.txt", ":g"] + select({"//a:c": ["y.txt"], "//conditions:default": []}))',
    'config_setting(name = "c", values = {"cpu": "k8"})',
    '',
  ].join('\n'),
  'a/x.txt': '',
  'a/y.txt': '',
  'a/loose.txt': '',
  'a/b/BUILD': 'sh_test(name = "t", srcs = ["t.sh"], size = "small")\n',
  'a/b/t.sh': '',
  'bazel-out/BUILD': 'filegroup(name = "ignored")\n',
};

describe('kiln query', () => {
  // Orders below are the ones Bazel 2.1.0 printed for the same workspace (default --order_output=auto).
  it("//... lists every rule in Bazel's order", async () => {
    const root = workspaceFixture(WS);
    const r = await query(root, ['//...']);
    expect(r).toEqual({ code: 0, out: '//a/b:t\n//a:fg\n//a:g\n//a:c\n//:top\n', err: '' });
  });

  it('supports //pkg/..., :all, :*, single labels and relative patterns', async () => {
    const root = workspaceFixture(WS);
    expect((await query(root, ['//a/b/...'])).out).toBe('//a/b:t\n');
    expect((await query(root, ['//a:all'])).out).toBe('//a:fg\n//a:g\n//a:c\n');
    expect((await query(root, ['//a:*'])).out).toBe('//a:g.out\n//a:fg\n//a:y.txt\n//a:x.txt\n//a:g\n//a:c\n//a:BUILD\n');
    expect((await query(root, ['//a:g.out'])).out).toBe('//a:g.out\n');
    // Bazel 2.1.0: an existing file no rule names is not a target.
    expect((await query(root, ['//a:loose.txt'])).err).toBe(
      `ERROR: no such target '//a:loose.txt': target 'loose.txt' not declared in package 'a'; however, a source file of this name exists.  (Perhaps add 'exports_files(["loose.txt"])' to a/BUILD?) defined by a/BUILD\n`,
    );
    expect((await query(root, [':all'], join(root, 'a/b'))).out).toBe('//a/b:t\n');
    expect((await query(root, ['b/...'], join(root, 'a'))).out).toBe('//a/b:t\n');
    expect((await query(root, ['//a:all - //a:g'])).out).toBe('//a:fg\n//a:c\n');
    expect((await query(root, ['//a/b:t + //:top'])).out).toBe('//a/b:t\n//:top\n');
    expect((await query(root, ['//a:* ^ //...'])).out).toBe('//a:fg\n//a:g\n//a:c\n');
  });

  it('prints label_kind, package and location', async () => {
    const root = workspaceFixture(WS);
    expect((await query(root, ['--output=label_kind', '//a:*'])).out).toBe(
      'generated file //a:g.out\nfilegroup rule //a:fg\nsource file //a:y.txt\nsource file //a:x.txt\ngenrule rule //a:g\nconfig_setting rule //a:c\nsource file //a:BUILD\n',
    );
    expect((await query(root, ['--output', 'package', '//...'])).out).toBe('\na\na/b\n');
    // As Bazel 2.1.0 prints them: a source file is located at the rule that first named it, the
    // BUILD file at line 1 without a column, rules at the start of the outermost call.
    expect((await query(root, ['--output=location', '//a:g + //a:x.txt + //a:g.out + //a:BUILD'])).out).toBe(
      `${join(root, 'a/BUILD')}:3:1: source file //a:x.txt\n` +
        `${join(root, 'a/BUILD')}:2:1: generated file //a:g.out\n` +
        `${join(root, 'a/BUILD')}:2:1: genrule rule //a:g\n` +
        `${join(root, 'a/BUILD')}:1: source file //a:BUILD\n`,
    );
  });

  // Expected text from Bazel 2.1.0 `query --output=build` on the same workspace (generator_* lines,
  // canonical output labels, location at the outermost call).
  it('prints BUILD form with explicit attributes and unresolved selects', async () => {
    const root = workspaceFixture(WS);
    // Two single-target patterns share no edge in Bazel's graph, so the greater label comes first.
    expect((await query(root, ['--output=build', '//a:fg + //a:g'])).out).toBe(
      [
        `# ${join(root, 'a/BUILD')}:2:1`,
        'genrule(',
        '  name = "g",',
        '  generator_name = "g",',
        '  generator_function = "gen",',
        '  generator_location = "a/BUILD:2",',
        '  outs = ["//a:g.out"],',
        '  cmd = "touch $@",',
        ')',
        '',
        `# ${join(root, 'a/BUILD')}:3:1`,
        'filegroup(',
        '  name = "fg",',
        '  srcs = ["//a:x.txt", "//a:g"] + select({"//a:c": ["//a:y.txt"], "//conditions:default": []}),',
        ')',
        '',
        '',
      ].join('\n'),
    );
  });

  it('queries the built-in @platforms repository', async () => {
    const root = workspaceFixture(WS);
    const r = await query(root, ['@platforms//os:linux + @platforms//cpu:x86_64', '--output=label_kind']);
    expect(r.out).toBe('constraint_value rule @platforms//os:linux\nconstraint_value rule @platforms//cpu:x86_64\n');
  });

  it('reports broken packages once, with positions; --keep_going loads the rest (exit 3)', async () => {
    const root = workspaceFixture({ ...WS, 'bad/BUILD': 'filegroup(name = "ok")\ngenrule(name = "x", bogus = 1, outs = ["o"])\n' });
    const r = await query(root, ['//...']);
    expect(r.code).toBe(7);
    // Bazel 2.1.0's lines for the same workspace (exit 7).
    expect(r.err).toBe(
      "ERROR: bad/BUILD:2:1: //bad:x: no such attribute 'bogus' in 'genrule' rule\n" +
        'ERROR: package contains errors: bad\n' +
        "ERROR: error loading package 'bad': Package 'bad' contains errors\n",
    );
    const k = await query(root, ['--keep_going', '//...']);
    expect(k.code).toBe(3);
    expect(k.out).toBe('//bad:ok\n//a/b:t\n//a:fg\n//a:g\n//a:c\n//:top\n');
    expect(k.err.match(/no such attribute/g)).toHaveLength(1);
    expect(k.err).toContain('WARNING: --keep_going specified, ignoring errors.  Results may be inaccurate\n');
  });

  it('fails clearly on missing targets, packages and subpackage crossings', async () => {
    const root = workspaceFixture(WS);
    expect((await query(root, ['//a:nope'])).err).toContain("ERROR: no such target '//a:nope': target 'nope' not declared in package 'a' defined by a/BUILD");
    expect((await query(root, ['//a:b/t.sh'])).err).toContain(
      "no such target '//a:b/t.sh': Label '//a:b/t.sh' is invalid because 'a/b' is a subpackage; perhaps you meant to put the colon here: '//a/b:t.sh'?",
    );
    const np = await query(root, ['//nope:all']);
    expect(np.code).toBe(7);
    expect(np.err).toContain("no such package 'nope': BUILD file not found");
    expect((await query(root, ['//nope/...'])).err).toContain("no targets found beneath 'nope'");
  });

  it('rejects bad syntax and bad flags with exit 2, a bad target pattern with exit 7 (as Bazel 2.1.0)', async () => {
    const root = workspaceFixture(WS);
    expect(await query(root, ['//a:b:c'])).toMatchObject({
      code: 7,
      err: "ERROR: invalid target format '//a:b:c': invalid target name 'b:c': target names may not contain ':'\n",
    });
    expect(await query(root, ['(//a:all'])).toMatchObject({ code: 2, err: "ERROR: Error while parsing '(//a:all': premature end of input\n" });
    expect(await query(root, ['--output=bogus', '//...'])).toMatchObject({ code: 2 });
    expect(await query(root, ['--bogus', '//...'])).toMatchObject({ code: 2, err: 'ERROR: Unrecognized option: --bogus\n' });
  });

  it('reads the query from --query_file, and rejects it together with a command-line query', async () => {
    const root = workspaceFixture({ ...WS, 'q.txt': 'deps(//a:fg, 1)\n  - //a:c\n' });
    expect(await query(root, ['--query_file=q.txt', '--noimplicit_deps'])).toMatchObject({ code: 0, out: '//a:fg\n//a:y.txt\n//a:x.txt\n//a:g\n' });
    expect(await query(root, ['--query_file', 'q.txt', '//...'])).toMatchObject({
      code: 2,
      err: 'ERROR: Command-line query and --query_file cannot both be specified\n',
    });
    expect((await query(root, ['--query_file=nope.txt'])).err).toContain('ERROR: I/O error reading from');
    expect(await query(root, ['--order_output=sideways', '//...'])).toMatchObject({ code: 2 });
    expect(await query(root, ['--graph:node_limit=x', '//...'])).toMatchObject({
      code: 2,
      err: "ERROR: While parsing option --graph:node_limit=x: 'x' is not an int\n",
    });
    expect(await query(root, ['--keep_going=maybe', '//...'])).toMatchObject({ code: 2 });
  });

  it('prints a generated file as its rule and nothing for source files (Bazel 2.1.0)', async () => {
    const root = workspaceFixture(WS);
    const out = (await query(root, ['--output=build', '//a:g.out + //a:x.txt + //a:g'])).out;
    expect(out.match(/^genrule\(/gm)).toHaveLength(1);
    expect(out).not.toContain('x.txt');
  });

  it('never lists packages of an output base inside the workspace', async () => {
    const root = workspaceFixture(WS);
    await query(root, ['@platforms//os:linux']); // materialises .ob/external/platforms
    expect((await query(root, ['//...'])).out).toBe('//a/b:t\n//a:fg\n//a:g\n//a:c\n//:top\n');
  });

  it('serves a second run from the package cache', async () => {
    const root = workspaceFixture(WS);
    const first = await query(root, ['--output=build', '//...']);
    const second = await query(root, ['--output=build', '//...']);
    expect(second).toEqual(first);
  });
});

describe('target patterns', () => {
  it('parses every form', () => {
    expect(parseTargetPattern('//...')).toMatchObject({ kind: 'beneath', dir: '', allTargets: false });
    expect(parseTargetPattern('//a/...:*')).toMatchObject({ kind: 'beneath', dir: 'a', allTargets: true });
    expect(parseTargetPattern('//a:all-targets')).toMatchObject({ kind: 'package', pkg: 'a', allTargets: true });
    expect(parseTargetPattern(':all', 'x/y')).toMatchObject({ kind: 'package', pkg: 'x/y', allTargets: false });
    expect(parseTargetPattern('@r//p:t')).toMatchObject({ kind: 'single' });
    expect(String((parseTargetPattern('//a') as { label: unknown }).label)).toBe('//a:a');
    expect(() => parseTargetPattern('/a')).toThrow('not a valid absolute pattern');
    expect(() => parseTargetPattern('//a/../b/...')).toThrow("Bad target pattern '//a/../b/...': package name component contains only '.' characters");
  });
});

describe('kiln query with the main repository by name', () => {
  it('treats @ws//... as the main repository', async () => {
    const root = workspaceFixture(WS);
    expect((await query(root, ['@ws//a/b:all'])).out).toBe('//a/b:t\n');
    expect((await query(root, ['@ws//a/b:t'])).out).toBe('//a/b:t\n');
  });
});
