import { lstat, mkdir, mkdtemp, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detectSandboxSupport } from '../../src/core/sandbox/index.js';
import { executeActions, prepareExecRoot } from '../../src/exec/index.js';
import { genrule, out, RecordingReporter, source } from './fixtures.js';

describe('prepareExecRoot', () => {
  let root: string;
  let ws: string;
  let execRoot: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'kiln-execroot-'));
    ws = join(root, 'ws');
    execRoot = join(root, 'ob', 'execroot', 'main');
    await mkdir(join(ws, 'pkg'), { recursive: true });
    await writeFile(join(ws, 'pkg', 'in.txt'), 'source\n');
    await writeFile(join(ws, 'WORKSPACE'), '');
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('links other repositories under external/, replacing and dropping stale links', async () => {
    const skylib = join(root, 'skylib');
    await mkdir(skylib);
    await prepareExecRoot(
      ws,
      execRoot,
      new Map([
        ['bazel_skylib', skylib],
        ['platforms', join(root, 'p')],
      ]),
    );
    expect(await readlink(join(execRoot, 'external', 'bazel_skylib'))).toBe(skylib);
    await prepareExecRoot(ws, execRoot, new Map([['bazel_skylib', join(root, 'other')]]));
    expect(await readlink(join(execRoot, 'external', 'bazel_skylib'))).toBe(join(root, 'other'));
    await expect(lstat(join(execRoot, 'external', 'platforms'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('links each top-level entry of the workspace, keeps bazel-out real, follows changes', async () => {
    await mkdir(join(ws, 'kiln-bin'));
    await mkdir(join(ws, 'bazel-out')); // as Bazel's own convenience symlink would be: never linked over the real one
    await prepareExecRoot(ws, execRoot);
    expect(await readlink(join(execRoot, 'pkg'))).toBe(join(ws, 'pkg'));
    expect(await readlink(join(execRoot, 'WORKSPACE'))).toBe(join(ws, 'WORKSPACE'));
    expect((await lstat(join(execRoot, 'bazel-out'))).isDirectory()).toBe(true);
    await expect(lstat(join(execRoot, 'kiln-bin'))).rejects.toMatchObject({ code: 'ENOENT' });

    await rm(join(ws, 'WORKSPACE'));
    await mkdir(join(ws, 'other'));
    await prepareExecRoot(ws, execRoot);
    await expect(lstat(join(execRoot, 'WORKSPACE'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readlink(join(execRoot, 'other'))).toBe(join(ws, 'other'));
  });

  it('lets actions read sources through the forest, locally and in the sandbox', async () => {
    await prepareExecRoot(ws, execRoot);
    const copy = (name: string) => genrule(`//pkg:${name}`, { srcs: [source('pkg/in.txt')], outs: [name], cmd: `cp pkg/in.txt ${out('pkg', name)}` });
    const bwrap = process.env.KILN_BWRAP;
    const support = bwrap ? await detectSandboxSupport({ bwrapPath: bwrap }) : undefined;
    const reporter = new RecordingReporter();
    const summary = await executeActions(
      [copy('one'), copy('two')],
      {
        execRoot,
        outputBase: join(root, 'ob'),
        clientEnv: { PATH: process.env.PATH },
        strategies: { strategyByMnemonic: { Genrule: support?.available ? ['sandboxed'] : ['local'] } },
        ...(support ? { sandbox: support } : {}),
      },
      reporter,
    );
    expect(summary.success).toBe(true);
    if (support?.available) expect(summary.processes['linux-sandbox']).toBe(2);
  });
});
