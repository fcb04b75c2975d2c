import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { blazeQuery } from '../../src/core/index.js';
import { E2eWorkspace } from './e2e-workspace.js';

const LOCAL = '--spawn_strategy=local';

/** The genquery actions a build ran (its plain progress lines). */
/** How many actions the build ran: genquery's writes its file in-process, as Bazel's does ("internal"). */
function ran(stderr: string): number {
  const m = /^INFO: (\d+) process(?:es)?[.:]/m.exec(stderr);
  if (!m) throw new Error(`no processes line in:\n${stderr}`);
  return Number(m[1]);
}

const WS = {
  WORKSPACE: '',
  BUILD: 'filegroup(name = "b", srcs = ["root.txt"])\n',
  'root.txt': '',
  'lib/BUILD': `
filegroup(name = "core", srcs = ["a.txt", ":gen"] + select({":opt": ["fast.txt"], "//conditions:default": ["slow.txt"]}), visibility = ["//visibility:public"])
genrule(name = "gen", srcs = ["in.txt"], outs = ["gen.out"], cmd = "cp $< $@")
config_setting(name = "opt", values = {"compilation_mode": "opt"})
filegroup(name = "other", srcs = ["o.txt"], visibility = ["//visibility:public"])
`,
  'lib/a.txt': '',
  'lib/in.txt': '',
  'lib/fast.txt': '',
  'lib/slow.txt': '',
  'lib/o.txt': '',
  'q/BUILD': `
genquery(name = "deps", expression = "deps(//lib:core)", scope = ["//lib:core"])
genquery(name = "kinds", expression = "deps(//lib:core)", scope = ["//lib:core"], opts = ["--output=label_kind"])
genquery(name = "path", expression = "somepath(//lib:core, //lib:in.txt)", scope = ["//lib:core"])
genquery(name = "ranks", expression = "deps(//lib:core)", scope = ["//lib:core"], opts = ["--output=maxrank"])
genquery(name = "root", expression = ":b", scope = ["//:b"])
genquery(name = "zipped", expression = "deps(//lib:core)", scope = ["//lib:core"], compressed_output = True)
genquery(name = "proto", expression = "//lib:core", scope = ["//lib:core"], opts = ["--output=proto"])
genquery(name = "loose", expression = "//lib:core + //lib:other", scope = ["//lib:core"], strict = False)
genquery(name = "tight", expression = "//lib:core + //lib:other", scope = ["//lib:core"])
genquery(name = "wild", expression = "//lib:all", scope = ["//lib:core"], tags = ["manual"])
genquery(name = "bad_opt", expression = "//lib:core", scope = ["//lib:core"], opts = ["--keep_going"], tags = ["manual"])
genquery(name = "bad_syntax", expression = "deps(//lib:core", scope = ["//lib:core"], tags = ["manual"])
genquery(name = "missing", expression = "//lib:nope", scope = ["//lib:core"], tags = ["manual"])
`,
};

describe('genquery', () => {
  it('writes the sorted result of the query over the scope closure to a file named after the rule', async () => {
    const ws = new E2eWorkspace(WS);
    const run = await ws.kiln(['build', LOCAL, '//q:deps', '//q:kinds', '//q:path', '//q:ranks', '//q:root', '//q:zipped', '//q:proto']);
    expect(run.code, run.stderr).toBe(0);
    // Sorted by label (not Bazel's dependency order), every select() branch and the config_setting.
    expect(ws.read('kiln-bin/q/deps')).toBe(
      ['//lib:a.txt', '//lib:core', '//lib:fast.txt', '//lib:gen', '//lib:in.txt', '//lib:opt', '//lib:slow.txt', ''].join('\n'),
    );
    expect(ws.read('kiln-bin/q/kinds')).toContain('genrule rule //lib:gen\nsource file //lib:in.txt\n');
    // A top-level somepath keeps path order.
    expect(ws.read('kiln-bin/q/path')).toBe('//lib:core\n//lib:gen\n//lib:in.txt\n');
    expect(ws.read('kiln-bin/q/ranks').split('\n')[0]).toBe('0 //lib:core');
    // Labels in the expression resolve from the workspace root (`:b` in q/BUILD is //:b).
    expect(ws.read('kiln-bin/q/root')).toBe('//:b\n');
    expect(gunzipSync(readFileSync(join(ws.root, 'kiln-bin/q/zipped'))).toString()).toBe(ws.read('kiln-bin/q/deps'));
    const proto = blazeQuery.QueryResult.decode(readFileSync(join(ws.root, 'kiln-bin/q/proto')));
    expect(proto.target.map((t) => t.rule?.name)).toEqual(['//lib:core']);
    expect(proto.target[0]!.rule!.ruleInput).toEqual(['//lib:a.txt', '//lib:fast.txt', '//lib:gen', '//lib:opt', '//lib:slow.txt']);
  });

  it('is an ordinary cached action: a second build runs nothing, a change to a scope package reruns it', async () => {
    const ws = new E2eWorkspace(WS);
    const first = await ws.kiln(['build', LOCAL, '//q:deps']);
    expect(ran(first.stderr), first.stderr).toBe(1);
    const again = await ws.kiln(['build', LOCAL, '//q:deps']);
    expect(again.code).toBe(0);
    expect(ran(again.stderr)).toBe(0);
    ws.write({ 'lib/BUILD': `${WS['lib/BUILD']}\nfilegroup(name = "extra", srcs = [":core"])\n` });
    const unchanged = await ws.kiln(['build', LOCAL, '//q:deps']);
    expect(ran(unchanged.stderr), unchanged.stderr).toBe(0);
    ws.write({ 'lib/BUILD': WS['lib/BUILD'].replace('"a.txt", ', '') });
    const changed = await ws.kiln(['build', LOCAL, '//q:deps']);
    expect(changed.code, changed.stderr).toBe(0);
    expect(ran(changed.stderr), changed.stderr).toBe(1);
    expect(ws.read('kiln-bin/q/deps')).not.toContain('a.txt');
  });

  it('strict = True fails during execution when the query leaves the scope; strict = False warns and skips', async () => {
    const ws = new E2eWorkspace(WS);
    const loose = await ws.kiln(['build', LOCAL, '//q:loose']);
    expect(loose.code, loose.stderr).toBe(0);
    expect(ws.read('kiln-bin/q/loose')).toBe('//lib:core\n');
    expect(loose.stderr).toContain("WARNING: q/BUILD:9:1: in genquery rule //q:loose: target '//lib:other' is not within the scope of the query");
    const tight = await ws.kiln(['build', LOCAL, '//q:tight']);
    expect(tight.code).toBe(1);
    expect(tight.stderr).toMatch(/^ERROR: q\/BUILD:\d+:1: in genquery rule \/\/q:tight: target '\/\/lib:other' is not within the scope of the query/m);
    // Analysis succeeded: the failure is the action's.
    expect(tight.stderr).toContain('INFO: Analyzed 1 target');
  });

  it('rejects wildcards, forbidden opts, bad syntax and missing targets during analysis', async () => {
    const ws = new E2eWorkspace(WS);
    const error = async (target: string) => {
      const r = await ws.kiln(['build', LOCAL, target]);
      expect(r.code).toBe(1);
      return r.stderr;
    };
    expect(await error('//q:wild')).toContain(
      "in expression attribute of genquery rule //q:wild: in genquery rule //q:wild: wildcard pattern '//lib:all' (column 1) is not allowed",
    );
    expect(await error('//q:bad_opt')).toContain("in opts attribute of genquery rule //q:bad_opt: option --keep_going is not allowed in genquery's opts");
    expect(await error('//q:bad_syntax')).toContain("Error while parsing 'deps(//lib:core': premature end of input");
    expect(await error('//q:missing')).toContain("no such target '//lib:nope'");
  });
});
