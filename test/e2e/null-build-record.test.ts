import { existsSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace, tempDir } from './e2e-workspace.js';

const LOCAL = '--spawn_strategy=local';

const FILES = {
  WORKSPACE: '',
  'lib/BUILD': `
genrule(name = "lonely", srcs = ["c.txt"], outs = ["lonely.txt"], cmd = "cat $< > $@")
genrule(name = "twice", srcs = [":lonely"], outs = ["twice.txt"], cmd = "cat $< $< > $@")
genrule(name = "tree", outs = ["t/a.txt"], cmd = "echo a > $@")
`,
  'lib/c.txt': 'gamma\n',
};

/** Sources older than the digest cache's racy window, as a workspace edited a while ago. */
function backdate(ws: E2eWorkspace): void {
  const past = new Date(Date.now() - 3_600_000);
  for (const path of Object.keys(FILES)) utimesSync(join(ws.root, path), past, past);
}

const withoutElapsed = (stderr: string) => stderr.replace(/Elapsed time: [\d.]+s/, 'Elapsed time: _');

describe('a repeated null build', () => {
  it('is answered from the record of the last one, printing what the ordinary path prints', async () => {
    const ws = new E2eWorkspace(FILES);
    backdate(ws);
    const outputBase = tempDir();
    const build = (env: Record<string, string> = {}) =>
      ws.kiln(['build', LOCAL, `--output_base=${outputBase}`, '//lib:all'], ws.root, undefined, undefined, env);
    const record = join(outputBase, 'analysis', 'null-build.bin');
    expect((await build()).code).toBe(0);
    expect(existsSync(record)).toBe(true);

    // Without the build graph the ordinary path would load and configure again: the record answered.
    for (const name of readdirSync(join(outputBase, 'analysis'))) if (name.endsWith('.v8')) rmSync(join(outputBase, 'analysis', name));
    const repeated = await build();
    expect(repeated.code).toBe(0);
    expect(repeated.stderr).toContain('INFO: Analyzed 3 targets (0 packages loaded, 0 targets configured).\n');
    expect(repeated.executed).toEqual([]);

    // The ordinary path's null build prints the same lines.
    rmSync(record);
    expect((await build()).code).toBe(0);
    const ordinary = await build();
    rmSync(record);
    const reanalyzed = await build();
    expect(reanalyzed.executed).toEqual([]);
    expect(withoutElapsed(repeated.stderr)).toBe(withoutElapsed(ordinary.stderr));
    expect(existsSync(record)).toBe(true);
  });

  it('takes the ordinary path after any change: an output deleted or edited, a source edited, another PATH, other options', async () => {
    const ws = new E2eWorkspace(FILES);
    backdate(ws);
    const outputBase = tempDir();
    const build = (extra: string[] = [], env: Record<string, string> = {}) =>
      ws.kiln(['build', LOCAL, `--output_base=${outputBase}`, ...extra, '//lib:all'], ws.root, undefined, undefined, env);
    expect((await build()).code).toBe(0);

    rmSync(join(ws.root, 'kiln-bin/lib/lonely.txt'));
    expect((await build()).executed).toEqual(['//lib:lonely']);
    expect(ws.read('kiln-bin/lib/lonely.txt')).toBe('gamma\n');

    writeFileSync(join(ws.root, 'kiln-bin/lib/twice.txt'), 'GAMMA\nGAMMA\n'); // same size, other bytes
    expect((await build()).executed).toEqual(['//lib:twice']);
    expect(ws.read('kiln-bin/lib/twice.txt')).toBe('gamma\ngamma\n');

    ws.write({ 'lib/c.txt': 'delta\n' });
    expect((await build()).executed).toEqual(['//lib:lonely', '//lib:twice']);
    expect(ws.read('kiln-bin/lib/twice.txt')).toBe('delta\ndelta\n');

    // PATH is part of every action's environment.
    const otherPath = await build([], { PATH: `/nonexistent:${process.env.PATH}` });
    expect(otherPath.executed).toEqual(['//lib:lonely', '//lib:tree', '//lib:twice']);
    // Another option: the ordinary path, which finds everything up to date.
    const otherOptions = await build(['--jobs=1'], { PATH: `/nonexistent:${process.env.PATH}` });
    expect(otherOptions.code).toBe(0);
    expect(otherOptions.executed).toEqual([]);
    expect(otherOptions.stderr).toContain('INFO: 0 processes.\n');
  });

  it('is not recorded when an output is a directory (its contents are more than one stamp)', async () => {
    const ws = new E2eWorkspace({
      WORKSPACE: '',
      'pkg/defs.bzl':
        'def _impl(ctx):\n    d = ctx.actions.declare_directory(ctx.label.name)\n    ctx.actions.run_shell(outputs = [d], command = "echo x > %s/x" % d.path)\n    return [DefaultInfo(files = depset([d]))]\ndirectory = rule(implementation = _impl)\n',
      'pkg/BUILD': 'load(":defs.bzl", "directory")\ndirectory(name = "d")\n',
    });
    const outputBase = tempDir();
    const run = await ws.kiln(['build', LOCAL, `--output_base=${outputBase}`, '//pkg:d']);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(outputBase, 'analysis', 'null-build.bin'))).toBe(false);
  });
});
