import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BuildDirectories } from '../../executor/build-directory.js';

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
