import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/commands/query.js';
import type { CliIO } from '../../src/cli/io.js';
import { blazeQuery } from '../../src/core/index.js';
import { filesBelow } from '../e2e/e2e-workspace.js';
import { workspaceFixture } from '../loading/fixture.js';

async function query(root: string, args: string[]): Promise<{ code: number; out: string; err: string; bytes: Buffer }> {
  const chunks: Buffer[] = [];
  let err = '';
  const io: CliIO = { stdout: { write: (c) => void chunks.push(Buffer.from(c)) }, stderr: { write: (c) => (err += String(c)) }, cwd: root, env: {} };
  const code = await main([`--output_base=${join(root, '.ob')}`, ...args], io);
  const bytes = Buffer.concat(chunks);
  return { code, out: bytes.toString('utf8'), err, bytes };
}

const WS = {
  WORKSPACE: '',
  'defs/BUILD': '',
  'defs/macros.bzl': 'load(":inner.bzl", "X")\ndef fg(name, **kw):\n    native.filegroup(name = name, **kw)\n',
  'defs/inner.bzl': 'X = 1\n',
  'a/BUILD': [
    'load("//defs:macros.bzl", "fg")',
    'fg(name = "top", srcs = [":mid", "//b:leaf"], tags = ["t1", "t2"])',
    'filegroup(name = "mid", srcs = ["m.txt"] + select({"//b:cfg": [":alt"], "//conditions:default": []}), testonly = True)',
    'filegroup(name = "alt", srcs = ["alt.txt"], data = ["//b:leaf"])',
    'genrule(name = "gen", srcs = [":mid"], outs = ["g.out"], cmd = "x", tools = [":tool"])',
    'filegroup(name = "tool")',
    'sh_test(name = "t_test", srcs = ["t.sh"])',
    'test_suite(name = "bad_suite", tests = [":mid"])',
    '',
  ].join('\n'),
  'b/BUILD': 'filegroup(name = "leaf", srcs = ["l.txt"], visibility = ["//visibility:public"])\nconfig_setting(name = "cfg", values = {"cpu": "x"})\n',
};

const labels = async (root: string, q: string, ...flags: string[]) => {
  const r = await query(root, [...flags, q]);
  expect(r.code, r.err).toBe(0);
  return r.out
    .split('\n')
    .filter((l) => l !== '')
    .sort();
};

describe('query functions', () => {
  it('deps and rdeps with depths, every select branch and its condition', async () => {
    const root = workspaceFixture(WS);
    expect(await labels(root, 'deps(//a:mid)')).toEqual(['//a:alt', '//a:alt.txt', '//a:m.txt', '//a:mid', '//b:cfg', '//b:l.txt', '//b:leaf']);
    expect(await labels(root, 'deps(//a:top, 1)')).toEqual(['//a:mid', '//a:top', '//b:leaf']);
    expect(await labels(root, 'deps(//a:top, 0)')).toEqual(['//a:top']);
    expect(await labels(root, 'rdeps(//a:all, //b:leaf, 1)')).toEqual(['//a:alt', '//a:top', '//b:leaf']);
    expect(await labels(root, 'rdeps(//a:top, //b:leaf)')).toEqual(['//a:alt', '//a:mid', '//a:top', '//b:leaf']);
    expect(await labels(root, 'allrdeps(//a:alt)')).toEqual(['//a:alt', '//a:bad_suite', '//a:g.out', '//a:gen', '//a:mid', '//a:top']);
    expect(await labels(root, 'allrdeps(//a:alt)', '--universe_scope=//a:top')).toEqual(['//a:alt', '//a:mid', '//a:top']);
  });

  it("a test_suite without tests depends on its package's tests not tagged manual, unless --noimplicit_deps", async () => {
    const root = workspaceFixture({
      WORKSPACE: '',
      'p/BUILD':
        'sh_test(name = "t1", srcs = ["t.sh"])\nsh_test(name = "t2", srcs = ["t.sh"], tags = ["manual"])\ntest_suite(name = "s")\ntest_suite(name = "named", tests = [":t2"])\n',
    });
    expect(await labels(root, 'deps(//p:s)')).toEqual(['//p:s', '//p:t.sh', '//p:t1']);
    expect(await labels(root, 'deps(//p:s)', '--noimplicit_deps')).toEqual(['//p:s']);
    expect(await labels(root, 'deps(//p:named)', '--noimplicit_deps')).toEqual(['//p:named', '//p:t.sh', '//p:t2']);
    expect(await labels(root, 'deps(//p:t1)', '--notool_deps')).toEqual(['//p:t.sh', '//p:t1']);
  });

  // Bazel's --noimplicit_deps keeps an attribute's labels only when the BUILD file set the attribute
  // (DependencyFilter.NO_IMPLICIT_DEPS = isAttributeValueExplicitlySpecified): a private `_tool`
  // default and a public attribute left to its default are both implicit; set explicitly, a public
  // attribute's labels are explicit, and a label the rule names itself stays. Recorded with Bazel 4.2.3.
  it("a Starlark rule's label defaults are implicit dependencies: listed by deps, left out by --noimplicit_deps (Bazel 4.2.3)", async () => {
    const dir = join(import.meta.dirname, 'bazel-4.2.3-implicit-deps');
    const root = workspaceFixture(filesBelow(join(dir, 'workspace')));
    const runs = readFileSync(join(dir, 'recorded.txt'), 'utf8').split('\n== ').slice(1);
    expect(runs).toHaveLength(4);
    for (const run of runs) {
      const [args, ...out] = run.trimEnd().split('\n');
      const words = args!.split(' ');
      expect(await labels(root, words.at(-1)!, ...words.slice(0, -1)), args).toEqual(out);
    }
    expect(await labels(root, 'rdeps(//r:all, //tools:gen.sh)', '--noimplicit_deps')).toEqual(['//r:names_tool', '//tools:gen.sh']);
    expect(await labels(root, 'somepath(//r:plain, //tools:gen.sh)', '--noimplicit_deps')).toEqual([]);
  });

  it('--notool_deps leaves out what only tools name', async () => {
    const root = workspaceFixture(WS);
    expect(await labels(root, 'deps(//a:gen, 1)')).toEqual(['//a:gen', '//a:mid', '//a:tool']);
    expect(await labels(root, 'deps(//a:gen, 1)', '--notool_deps')).toEqual(['//a:gen', '//a:mid']);
  });

  it('somepath, allpaths, kind, filter, attr, labels', async () => {
    const root = workspaceFixture(WS);
    expect((await query(root, ['somepath(//a:gen, //b:l.txt)'])).out.split('\n').length).toBe(6);
    expect(await labels(root, 'somepath(//b:leaf, //a:top)')).toEqual([]);
    expect(await labels(root, 'allpaths(//a:top, //b:leaf)')).toEqual(['//a:alt', '//a:mid', '//a:top', '//b:leaf']);
    expect(await labels(root, 'kind("genrule|sh_test", //a:*)')).toEqual(['//a:gen', '//a:t_test']);
    expect(await labels(root, 'kind("generated file", //a:*)')).toEqual(['//a:g.out']);
    expect(await labels(root, 'filter("^//a:[mt]", //a:*)')).toEqual(['//a:m.txt', '//a:mid', '//a:t.sh', '//a:t_test', '//a:tool', '//a:top']);
    expect(await labels(root, 'attr(tags, "\\[t1, t2\\]", //a:all)')).toEqual(['//a:top']);
    expect(await labels(root, 'attr(testonly, 1, //a:all)')).toEqual(['//a:mid']);
    expect(await labels(root, 'attr(testonly, 0, //a:all)')).not.toContain('//a:mid');
    expect(await labels(root, 'attr(srcs, alt, //a:all)')).toEqual(['//a:alt', '//a:mid']);
    expect(await labels(root, 'attr(generator_function, fg, //a:all)')).toEqual([]);
    expect(await labels(root, 'labels(srcs, //a:mid + //a:top)')).toEqual(['//a:alt', '//a:m.txt', '//a:mid', '//b:leaf']);
    expect(await labels(root, 'labels(tools, //a:gen)')).toEqual(['//a:tool']);
    expect(await labels(root, 'labels(nosuch, //a:gen)')).toEqual([]);
  });

  it('tests, buildfiles, loadfiles, rbuildfiles, siblings, same_pkg_direct_rdeps, visible, some, set', async () => {
    const root = workspaceFixture(WS);
    expect(await labels(root, 'tests(//a:t_test + //a:mid)')).toEqual(['//a:t_test']);
    expect(await labels(root, 'buildfiles(//a:top)')).toEqual(['//a:BUILD', '//defs:BUILD', '//defs:inner.bzl', '//defs:macros.bzl']);
    expect(await labels(root, 'loadfiles(//a:top + //b:leaf)')).toEqual(['//defs:inner.bzl', '//defs:macros.bzl']);
    expect(await labels(root, 'rbuildfiles(defs/inner.bzl)')).toEqual(['//a:BUILD']);
    expect(await labels(root, 'rbuildfiles(b/BUILD, defs/macros.bzl)')).toEqual(['//a:BUILD', '//b:BUILD']);
    expect(await labels(root, 'siblings(//b:cfg)')).toEqual(['//b:BUILD', '//b:cfg', '//b:l.txt', '//b:leaf']);
    expect(await labels(root, 'same_pkg_direct_rdeps(//a:mid)')).toEqual(['//a:bad_suite', '//a:gen', '//a:top']);
    expect(await labels(root, 'visible(//a:top, //b:*)')).toEqual(['//b:leaf']);
    expect(await labels(root, 'some(//a:all)')).toEqual(['//a:alt']);
    expect(await labels(root, 'some(//a:all, 2)')).toEqual(['//a:alt', '//a:bad_suite']);
    expect(await labels(root, 'set(//a:top b:leaf)')).toEqual(['//a:top', '//b:leaf']);
    expect(await labels(root, 'let x = deps(//a:top, 1) in $x ^ //b:*')).toEqual(['//b:leaf']);
  });

  it('reports evaluation errors with exit 7 and syntax errors with exit 2', async () => {
    const root = workspaceFixture(WS);
    const cases: [string, number, string][] = [
      ['some(//a:nosuch_pattern_match - //a:all)', 7, 'no such target'],
      ['some(//a:all - //a:all)', 7, 'argument set is empty'],
      ['kind("(", //a:all)', 7, "illegal 'kind' pattern regexp '('"],
      ['$undefined', 7, "undefined variable 'undefined'"],
      ['tests(//a:bad_suite)', 7, "The label '//a:mid' in the test_suite '//a:bad_suite' does not refer to a test or test_suite rule!"],
      ['deps(//a:top, x)', 2, "expected an integer literal: 'x'"],
      ['rbuildfiles(/abs/path)', 7, "rbuildfiles takes workspace-relative file paths, not '/abs/path'"],
    ];
    for (const [q, code, message] of cases) {
      const r = await query(root, [q]);
      expect(r.code, q).toBe(code);
      expect(r.err, q).toContain(message);
    }
  });
});

describe('output formats', () => {
  it('proto, streamed_proto and streamed_jsonproto are Bazel build.proto messages', async () => {
    const root = workspaceFixture(WS);
    const proto = blazeQuery.QueryResult.decode((await query(root, ['--output=proto', '//a:gen + //a:g.out + //b:l.txt'])).bytes);
    // No edges among single targets: greatest label first.
    expect(proto.target.map((t) => t.type)).toEqual([
      blazeQuery.Target_Discriminator.SOURCE_FILE,
      blazeQuery.Target_Discriminator.RULE,
      blazeQuery.Target_Discriminator.GENERATED_FILE,
    ]);
    const rule = proto.target[1]!.rule!;
    expect(rule).toMatchObject({ name: '//a:gen', ruleClass: 'genrule', ruleInput: ['//a:mid', '//a:tool'], ruleOutput: ['//a:g.out'] });
    expect(rule.location).toBe(`${join(root, 'a/BUILD')}:5:1`);
    const cmd = rule.attribute.find((a) => a.name === 'cmd')!;
    expect(cmd).toMatchObject({ type: blazeQuery.Attribute_Discriminator.STRING, stringValue: 'x', explicitlySpecified: true });
    const local = rule.attribute.find((a) => a.name === 'local')!;
    expect(local).toMatchObject({ type: blazeQuery.Attribute_Discriminator.BOOLEAN, explicitlySpecified: false });
    expect(proto.target[2]!.generatedFile).toMatchObject({ name: '//a:g.out', generatingRule: '//a:gen' });

    // streamed_proto: varint-delimited Targets.
    const stream = (await query(root, ['--output=streamed_proto', '//b:leaf + //b:cfg'])).bytes;
    const names: string[] = [];
    for (let at = 0; at < stream.length; ) {
      let size = 0;
      let last = false;
      for (let shift = 0; !last; shift += 7) {
        const b = stream[at++];
        if (b === undefined || shift > 28) throw new Error('streamed_proto: truncated or overlong length prefix');
        size |= (b & 0x7f) << shift;
        last = b < 0x80;
      }
      names.push(blazeQuery.Target.decode(stream.subarray(at, at + size)).rule!.name);
      at += size;
    }
    expect(names).toEqual(['//b:leaf', '//b:cfg']);

    const json = (await query(root, ['--output=streamed_jsonproto', '//b:leaf'])).out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(json).toHaveLength(1);
    expect(json[0]).toMatchObject({ type: 'RULE', rule: { name: '//b:leaf', ruleClass: 'filegroup', ruleInput: ['//b:l.txt'] } });
    expect(json[0].rule.attribute.find((a: { name: string }) => a.name === 'visibility')).toMatchObject({
      type: 'STRING_LIST',
      stringListValue: ['//visibility:public'],
    });
  });

  it('xml and location name each target at its place', async () => {
    const root = workspaceFixture(WS);
    const xml = (await query(root, ['--output=xml', '//a:mid'])).out;
    expect(xml).toContain(`<rule class="filegroup" location="${join(root, 'a/BUILD')}:3:1" name="//a:mid">`);
    expect(xml).toContain('<boolean name="testonly" value="true"/>');
    // select() flattened: every branch's labels, once.
    expect(xml).toContain('<list name="srcs">\n            <label value="//a:m.txt"/>\n            <label value="//a:alt"/>\n        </list>');
    expect(xml).toContain('<rule-input name="//b:cfg"/>');
  });
});

describe('query over large graphs and cycles', () => {
  // A ring of 12,000 filegroups in one package: deeper than any recursive walk's stack allows.
  const N = 12_000;
  const chain = {
    WORKSPACE: '',
    'c/BUILD': `[filegroup(name = "n%d" % i, srcs = [":n%d" % (i + 1)] if i < ${N - 1} else [":n0"]) for i in range(${N})]\n`,
  };

  it('walks, paths, ranks and orders without recursion limits', async () => {
    const root = workspaceFixture(chain);
    const deps = await query(root, ['deps(//c:n0)']);
    expect(deps.code, deps.err).toBe(0);
    expect(deps.out.split('\n')).toHaveLength(N + 1);
    expect(deps.out.startsWith('//c:n0\n//c:n1\n')).toBe(true);
    expect((await query(root, ['somepath(//c:n0, //c:n11999)'])).out.split('\n')).toHaveLength(N + 1);
    expect((await query(root, ['allpaths(//c:n5, //c:n3)'])).out.split('\n')).toHaveLength(N + 1);
    expect((await query(root, ['rdeps(//c:all, //c:n7, 2)'])).out).toBe('//c:n5\n//c:n6\n//c:n7\n');
    // The whole chain is one cycle: one rank.
    const ranks = (await query(root, ['--output=maxrank', 'deps(//c:n0)'])).out.split('\n');
    expect(new Set(ranks.filter((l) => l !== '').map((l) => l.split(' ')[0]))).toEqual(new Set(['0']));
    expect((await query(root, ['--output=graph', 'deps(//c:n0)'])).out.split('\n')).toHaveLength(2 * N + 4);
  });

  it('reports a load() cycle as the package error it is, with positions, and goes on under --keep_going', async () => {
    const root = workspaceFixture({
      WORKSPACE: '',
      'a/BUILD': 'load(":x.bzl", "X")\nfilegroup(name = "f")\n',
      'a/x.bzl': 'load(":y.bzl", "Y")\nX = 1\n',
      'a/y.bzl': 'load(":x.bzl", "X")\nY = 1\n',
      'b/BUILD': 'filegroup(name = "ok")\n',
    });
    const r = await query(root, ['deps(//a:f)']);
    expect(r.code).toBe(7);
    expect(r.err).toContain('ERROR: a/y.bzl:1:6: cannot load :x.bzl: cycle detected in extension files: //a:x.bzl -> //a:y.bzl -> //a:x.bzl\n');
    expect(r.err).not.toMatch(/\n\s+at /);
    const k = await query(root, ['--keep_going', '//...']);
    expect(k).toMatchObject({ code: 3, out: '//b:ok\n' });
  });
});
