import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { needTool } from '../setup/need-tool.js';
import { E2eWorkspace } from './e2e-workspace.js';
import { startKilnCluster } from './kiln-cluster.js';

const LOCAL = '--spawn_strategy=local';
const HAS_BWRAP = spawnSync('bwrap', ['--version']).status === 0;

// count_aspect runs a process per rule below the requested target (run_shell), so its actions go
// through the strategies like any other; `top` applies it through attr.label_list(aspects = ...).
const FILES: Record<string, string> = {
  WORKSPACE: '',
  'pkg/defs.bzl': `
CountInfo = provider(fields = ["count"])

def _count_impl(target, ctx):
    count = 1
    for d in ctx.rule.attr.deps:
        count += d[CountInfo].count
    out = ctx.actions.declare_file(ctx.label.name + ".count")
    ctx.actions.run_shell(
        outputs = [out],
        inputs = [ctx.file._tool],
        command = "echo %s %d $(cat %s) > %s" % (ctx.rule.kind, count, ctx.file._tool.path, out.path),
    )
    return [CountInfo(count = count), OutputGroupInfo(counts = depset([out]))]

count_aspect = aspect(
    implementation = _count_impl,
    attr_aspects = ["deps"],
    attrs = {"_tool": attr.label(default = "//pkg:tool.txt", allow_single_file = True)},
)

def _lib_impl(ctx):
    return []

lib = rule(implementation = _lib_impl, attrs = {"deps": attr.label_list()})

def _top_impl(ctx):
    total = 0
    for d in ctx.attr.deps:
        total += d[CountInfo].count
    out = ctx.actions.declare_file(ctx.label.name + ".txt")
    ctx.actions.write(out, "total %d\\n" % total)
    return [DefaultInfo(files = depset([out]))]

top = rule(implementation = _top_impl, attrs = {"deps": attr.label_list(aspects = [count_aspect])})
`,
  'pkg/tool.txt': 'v1\n',
  'pkg/BUILD': `
load(":defs.bzl", "lib", "top")
exports_files(["tool.txt"])
lib(name = "a")
lib(name = "b", deps = [":a"])
top(name = "t", deps = [":b"])
`,
};

const ASPECT = '--aspects=//pkg:defs.bzl%count_aspect';

describe('kiln build with aspects', () => {
  it("--aspects with --output_groups builds the aspect's outputs and prints them as Bazel does", async () => {
    const ws = new E2eWorkspace(FILES);
    const run = await ws.kiln(['build', LOCAL, ASPECT, '--output_groups=counts', '//pkg:b']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('Aspect //pkg:defs.bzl%count_aspect of //pkg:b up-to-date:\n  kiln-bin/pkg/b.count\n');
    expect(run.stderr).not.toContain('Target //pkg:b');
    // Present-day Bazel counts the applications apart: b's and a's.
    expect(run.stderr).toMatch(/INFO: Analyzed 1 target \(\d+ packages? loaded, \d+ targets and 2 aspects configured\)\./);
    expect(ws.read('kiln-bin/pkg/b.count')).toBe('lib 2 v1\n');
    // Only the requested target's output group is built (as Bazel 4.2.3 does): a.count is not.
    expect(existsSync(join(ws.root, 'kiln-bin/pkg/a.count'))).toBe(false);
    // No output group asked for: the aspect has nothing to build (Bazel 4.2.3's line).
    const bare = await ws.kiln(['build', LOCAL, ASPECT, '//pkg:b']);
    expect(bare.code, bare.stderr).toBe(0);
    expect(bare.stderr).toContain('Aspect //pkg:defs.bzl%count_aspect of //pkg:b up-to-date (nothing to build)\n');
  });

  it("edits reach aspect applications: the aspect's .bzl, its implicit input, the graph below", async () => {
    const ws = new E2eWorkspace(FILES);
    expect((await ws.kiln(['build', LOCAL, '//pkg:t'])).code).toBe(0);
    expect(ws.read('kiln-bin/pkg/t.txt')).toBe('total 2\n');
    // A rule added below //pkg:b: the application on b sees it.
    ws.write({ 'pkg/BUILD': FILES['pkg/BUILD']!.replace('lib(name = "b", deps = [":a"])', 'lib(name = "b", deps = [":a", ":z"])\nlib(name = "z")') });
    const grown = await ws.kiln(['build', LOCAL, '//pkg:t']);
    expect(grown.code, grown.stderr).toBe(0);
    expect(ws.read('kiln-bin/pkg/t.txt')).toBe('total 3\n');
    ws.write({ 'pkg/defs.bzl': FILES['pkg/defs.bzl']!.replace('count = 1\n', 'count = 10\n') });
    const edited = await ws.kiln(['build', LOCAL, ASPECT, '--output_groups=+counts', '//pkg:t']);
    expect(edited.code, edited.stderr).toBe(0);
    expect(ws.read('kiln-bin/pkg/t.txt')).toBe('total 30\n');
    // The command line's application to //pkg:t propagates along its deps too: 10 + 30.
    expect(ws.read('kiln-bin/pkg/t.count')).toBe('top 40 v1\n');
    ws.write({ 'pkg/tool.txt': 'v2\n' });
    const input = await ws.kiln(['build', LOCAL, ASPECT, '--output_groups=counts', '//pkg:b']);
    expect(input.code, input.stderr).toBe(0);
    expect(ws.read('kiln-bin/pkg/b.count')).toBe('lib 30 v2\n');
    expect(input.stderr).toContain('INFO: 1 process: 1 local.');
    // Unchanged since: nothing runs again.
    const again = await ws.kiln(['build', LOCAL, ASPECT, '--output_groups=counts', '//pkg:b']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('INFO: 0 processes.');
  });

  it("an aspect that names nothing is Bazel's error", async () => {
    const ws = new E2eWorkspace(FILES);
    const unknown = await ws.kiln(['build', LOCAL, '--aspects=nodefs', '//pkg:b']);
    expect(unknown.code, unknown.stderr).toBe(1);
    expect(unknown.stderr).toContain("ERROR: Aspect 'nodefs' is unknown\n");
    const missing = await ws.kiln(['build', LOCAL, '--aspects=//pkg:defs.bzl%nope', '//pkg:b']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      "ERROR: nope is not exported from //pkg:defs.bzl\nERROR: Analysis of aspect '//pkg:defs.bzl%nope of //pkg:b' failed; build aborted: nope is not exported from //pkg:defs.bzl\n",
    );
    const noFile = await ws.kiln(['build', LOCAL, '--aspects=//pkg:none.bzl%x', '//pkg:b']);
    expect(noFile.code).toBe(1);
    expect(noFile.stderr).toContain(
      "ERROR: cannot load '//pkg:none.bzl': no such file\nERROR: Analysis of aspect '//pkg:none.bzl%x of //pkg:b' failed; build aborted: cannot load '//pkg:none.bzl': no such file\n",
    );
  });

  const sandboxHere = needTool('bubblewrap', HAS_BWRAP, 'run scripts/test-setup.d/10-bubblewrap.sh (npm test does)');
  it.skipIf(!sandboxHere)("an aspect's actions run sandboxed like any other", async () => {
    const sandboxed = new E2eWorkspace(FILES);
    const run = await sandboxed.kiln(['build', '--spawn_strategy=sandboxed', ASPECT, '--output_groups=counts', '//pkg:b']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('1 linux-sandbox');
    expect(sandboxed.read('kiln-bin/pkg/b.count')).toBe('lib 2 v1\n');
  });

  it("an aspect's actions run on the cluster like any other", { timeout: 60_000 }, async () => {
    const cluster = await startKilnCluster();
    const remote = new E2eWorkspace(FILES);
    const built = await remote.kiln(['build', `--remote_executor=${cluster.endpoint}`, ASPECT, '--output_groups=counts', '//pkg:b']);
    expect(built.code, built.stderr).toBe(0);
    expect(built.stderr).toContain('1 remote');
    expect(remote.read('kiln-bin/pkg/b.count')).toBe('lib 2 v1\n');
  });
});
