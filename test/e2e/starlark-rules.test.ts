import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { needTool } from '../setup/need-tool.js';
import { BAZEL_DIR } from '../analysis/starlark/bazel-fixture.js';
import { E2eWorkspace, filesBelow } from './e2e-workspace.js';

const LOCAL = '--spawn_strategy=local';

/** The files of the workspace Bazel 2.1.0 built (test/analysis/starlark/bazel-2.1.0/workspace). */
const recordedWorkspace = () => filesBelow(join(BAZEL_DIR, 'workspace'));

/** `== bazel-bin/ok/x` blocks of the recorded run: path to content. */
function recordedOutputs(): Map<string, string> {
  const lines = readFileSync(join(BAZEL_DIR, 'ok.recorded.txt'), 'utf8').split('\n').slice(0, -1);
  const out = new Map<string, string>();
  let current: string | undefined;
  for (const l of lines.slice(lines.findIndex((x) => x.startsWith('== ')))) {
    if (l.startsWith('== ')) out.set((current = l.slice(3).replace('bazel-bin/', '')), '');
    else out.set(current!, `${out.get(current!)}${l}\n`);
  }
  return out;
}

describe('kiln build of Starlark rules', () => {
  it('builds //ok:all to the same outputs as Bazel 2.1.0 (write, run_shell with Args, expand_template, output_group)', async () => {
    const ws = new E2eWorkspace(recordedWorkspace());
    const run = await ws.kiln(['build', LOCAL, '//ok:all']);
    expect(run.stderr).toContain('DEBUG: ok/defs.bzl:26:5: label //ok:top top ok __main__');
    expect(run.code).toBe(0);
    for (const [path, content] of recordedOutputs()) {
      expect(ws.read(`kiln-bin/${path}`).replace(/kiln-out|bazel-out/g, 'bazel-out'), path).toBe(content);
    }
    expect(statSync(join(ws.root, 'kiln-bin/ok/top.sh')).mode & 0o111).not.toBe(0);
    // A second build finds every action, in-process ones included, up to date.
    const again = await ws.kiln(['build', LOCAL, '//ok:all']);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('INFO: 0 processes.');
  });

  it.skipIf(!needTool('bubblewrap', spawnSync('bwrap', ['--version']).status === 0, 'run scripts/test-setup.d/10-bubblewrap.sh (npm test does)'))(
    'runs run_shell sandboxed and writes in-process: the same outputs',
    async () => {
      const ws = new E2eWorkspace(recordedWorkspace());
      const run = await ws.kiln(['build', '--spawn_strategy=sandboxed', '//ok:top']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/\d+ internal, \d+ linux-sandbox/);
      expect(ws.read('kiln-bin/ok/top.txt').replace(/kiln-out/g, 'bazel-out')).toBe(recordedOutputs().get('ok/top.txt'));
    },
  );

  it("filegroup output_group and --output_groups build a rule's OutputGroupInfo", async () => {
    const ws = new E2eWorkspace(recordedWorkspace());
    const fg = await ws.kiln(['build', LOCAL, '//ok:extra']);
    expect(fg.code, fg.stderr).toBe(0);
    expect(ws.read('kiln-bin/ok/top.extra')).toBe('extra top\n');
    expect(existsSync(join(ws.root, 'kiln-bin/ok/top.txt'))).toBe(false);
    const only = await ws.kiln(['build', LOCAL, '--output_groups=extra', '//ok:base']);
    expect(only.code, only.stderr).toBe(0);
    expect(ws.read('kiln-bin/ok/base.extra')).toBe('extra base\n');
    expect(existsSync(join(ws.root, 'kiln-bin/ok/base.txt'))).toBe(false);
    const both = await ws.kiln(['build', LOCAL, '--output_groups=+extra', '//ok:top']);
    expect(both.code, both.stderr).toBe(0);
    expect(existsSync(join(ws.root, 'kiln-bin/ok/top.txt'))).toBe(true);
  });

  it('a changed template reruns only its expansion', async () => {
    const ws = new E2eWorkspace(recordedWorkspace());
    expect((await ws.kiln(['build', LOCAL, '//ok:top'])).code).toBe(0);
    ws.write({ 'ok/t.tpl': 'X={X} N={NAME}\n' });
    const run = await ws.kiln(['build', LOCAL, '//ok:top']);
    expect(run.code).toBe(0);
    expect(ws.read('kiln-bin/ok/top.tmpl.out')).toBe('X=y N=top\n');
    expect(run.stderr).toContain('INFO: 1 process: 1 internal.');
  });

  it('a changed rule implementation is analysed again (the analysis cache tracks the .bzl file)', async () => {
    const ws = new E2eWorkspace(recordedWorkspace());
    expect((await ws.kiln(['build', LOCAL, '--output_groups=extra', '//ok:base'])).code).toBe(0);
    expect(ws.read('kiln-bin/ok/base.extra')).toBe('extra base\n');
    const same = await ws.kiln(['build', LOCAL, '--output_groups=extra', '//ok:base']);
    expect(same.code).toBe(0);
    expect(same.stderr).toContain('0 packages loaded, 0 targets configured');
    ws.write({ 'ok/defs.bzl': ws.read('ok/defs.bzl').replace('"extra " + ctx.label.name', '"more " + ctx.label.name') });
    const changed = await ws.kiln(['build', LOCAL, '--output_groups=extra', '//ok:base']);
    expect(changed.code, changed.stderr).toBe(0);
    expect(ws.read('kiln-bin/ok/base.extra')).toBe('more base\n');
  });

  it('ctx.info_file and ctx.version_file: the workspace status files, written once per build', async () => {
    const ws = new E2eWorkspace({
      WORKSPACE: '',
      'pkg/defs.bzl': `
def _impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".txt")
    ctx.actions.run_shell(outputs = [out], inputs = [ctx.info_file, ctx.version_file], command = "cut -d' ' -f1 %s %s > %s" % (ctx.info_file.path, ctx.version_file.path, out.path))
    return [DefaultInfo(files = depset([out]))]
stamped = rule(implementation = _impl)
`,
      'pkg/BUILD': 'load(":defs.bzl", "stamped")\nstamped(name = "a")\nstamped(name = "b")\n',
    });
    const run = await ws.kiln(['build', LOCAL, '//pkg:a', '//pkg:b']);
    expect(run.code, run.stderr).toBe(0);
    expect(ws.read('kiln-bin/pkg/a.txt')).toBe('BUILD_EMBED_LABEL\nBUILD_HOST\nBUILD_USER\nBUILD_TIMESTAMP\n');
    expect(ws.read('kiln-out/stable-status.txt')).toMatch(/^BUILD_EMBED_LABEL \nBUILD_HOST \S+\nBUILD_USER \S+\n$/);
  });

  it('kiln run starts the executable a Starlark rule returned', async () => {
    const ws = new E2eWorkspace(recordedWorkspace());
    const run = await ws.kiln(['run', LOCAL, '//ok:base']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('hi\n');
  });

  it('an implementation error stops the build with its position and backtrace', async () => {
    const ws = new E2eWorkspace(recordedWorkspace());
    const run = await ws.kiln(['build', LOCAL, '//e_field:t']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /ERROR: e_field\/defs\.bzl:6:\d+: in r rule \/\/e_field:t: 'P' value has no field or method 'nope'\nAvailable attributes: a\nTraceback \(most recent call last\):\n/,
    );
  });

  it("an Args map_each that fails is the action's failure at execution, after analysis succeeded", async () => {
    const ws = new E2eWorkspace({
      WORKSPACE: '',
      'm/defs.bzl': `
def _each(f):
    if f.basename == "bad.txt":
        fail("cannot map " + f.basename)
    return f.basename.upper()

def _impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".out")
    args = ctx.actions.args()
    args.add(out)
    args.add_all(depset(ctx.files.srcs), map_each = _each)
    ctx.actions.run_shell(outputs = [out], arguments = [args], command = 'out=$1; shift; echo "$@" > $out')
    return [DefaultInfo(files = depset([out]))]

r = rule(implementation = _impl, attrs = {"srcs": attr.label_list(allow_files = True)})
`,
      'm/BUILD': 'load(":defs.bzl", "r")\nr(name = "good", srcs = ["a.txt", "b.txt"])\nr(name = "bad", srcs = ["bad.txt"])\n',
      'm/a.txt': '',
      'm/b.txt': '',
      'm/bad.txt': '',
    });
    const good = await ws.kiln(['build', LOCAL, '//m:good']);
    expect(good.code, good.stderr).toBe(0);
    expect(ws.read('kiln-bin/m/good.out')).toBe('A.TXT B.TXT\n');
    const bad = await ws.kiln(['build', LOCAL, '//m:bad']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('cannot map bad.txt');
    expect(bad.stderr).toContain('INFO: Analyzed 1 target');
    expect(bad.stderr).toContain('ERROR: m/BUILD:3:1: ');
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });
});
