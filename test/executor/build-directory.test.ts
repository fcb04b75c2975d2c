import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/core/index.js';
import { BuildDirectories, prepareOutputParents } from '../../executor/build-directory.js';

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

const fresh = () => (root = mkdtempSync(join(tmpdir(), 'kiln-build-dirs-')));

describe('BuildDirectories', () => {
  it('hands a directory left empty to the next action instead of removing it', async () => {
    const dirs = new BuildDirectories(fresh());
    const first = dirs.acquire('t1');
    expect(readdirSync(first)).toEqual([]);
    await dirs.release(first);
    expect(existsSync(first)).toBe(true);
    expect(dirs.acquire('t2')).toBe(first);
    // Two at once: the second is made anew.
    const second = dirs.acquire('t3');
    expect(second).toBe(join(root!, 't3'));
  });

  it('removes a directory the action left content in, and makes a new one next time', async () => {
    const dirs = new BuildDirectories(fresh());
    const used = dirs.acquire('t1');
    writeFileSync(join(used, 'out.txt'), 'x');
    await dirs.release(used);
    expect(existsSync(used)).toBe(false);
    expect(dirs.acquire('t2')).toBe(join(root!, 't2'));
  });

  it('removes a directory whose mode the action changed', async () => {
    const dirs = new BuildDirectories(fresh());
    const used = dirs.acquire('t1');
    chmodSync(used, 0o700);
    await dirs.release(used);
    expect(existsSync(used)).toBe(false);
  });

  it('makes the build root when it is missing, and close() removes the directories kept', async () => {
    const dirs = new BuildDirectories(join(fresh(), 'missing', 'build'));
    const dir = dirs.acquire('t1');
    await dirs.release(dir);
    dirs.close();
    expect(readdirSync(join(root!, 'missing', 'build'))).toEqual([]);
  });
});

describe('prepareOutputParents', () => {
  it('makes the working directory and missing output parents, never through a symlink of the input root', async () => {
    const base = fresh();
    const build = join(base, 'build');
    const outside = join(base, 'outside');
    mkdirSync(build);
    mkdirSync(outside);
    await prepareOutputParents(build, 'w', ['a/b/out', 'c', 'a/d']);
    expect(statSync(join(build, 'w', 'a', 'b')).isDirectory()).toBe(true);
    expect(existsSync(join(build, 'w', 'c'))).toBe(false);
    symlinkSync(outside, join(build, 'w', 'link'));
    await expect(prepareOutputParents(build, 'w', ['link/made/out'])).rejects.toThrow(
      new InvalidArgumentError('output "link/made/out": its parent directory cannot be made, a symlink or a file of the input root is in its way'),
    );
    await expect(prepareOutputParents(build, 'w/link/x', [])).rejects.toThrow(/Command.working_directory "w\/link\/x": a symlink or a file/);
    expect(readdirSync(outside)).toEqual([]);
  });
});
