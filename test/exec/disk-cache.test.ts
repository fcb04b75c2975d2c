import { lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { OutputKind } from '../../src/actions/index.js';
import { digestOf, reapi, type Digest } from '../../src/core/index.js';
import { DiskCache } from '../../src/exec/disk-cache.js';

const temps: string[] = [];
afterEach(async () => {
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-disk-cache-'));
  temps.push(dir);
  return dir;
}

const ACTION: Digest = digestOf(Buffer.from('the action'));
const TREE_PATH = 'bazel-out/k8-fastbuild/bin/pkg/t_d';
const FILE_PATH = 'bazel-out/k8-fastbuild/bin/pkg/big.bin';

/** Writes a blob file where `--disk_cache` keeps it, as anyone who can write the directory could. */
async function plant(dir: string, keyspace: 'cas' | 'ac', hash: string, data: Buffer): Promise<string> {
  const path = join(dir, keyspace, hash.slice(0, 2), hash);
  await mkdir(join(dir, keyspace, hash.slice(0, 2)), { recursive: true });
  await writeFile(path, data);
  return path;
}
const plantResult = (dir: string, init: reapi.ActionResultInit) => plant(dir, 'ac', ACTION.hash, Buffer.from(reapi.ActionResult.encode(init)));
const plantBlob = (dir: string, data: Buffer) => plant(dir, 'cas', digestOf(data).hash, data);
const exists = (path: string) =>
  lstat(path).then(
    () => true,
    () => false,
  );
const kinds = (entries: Record<string, OutputKind>) => new Map(Object.entries(entries));

describe('DiskCache: entries as untrusted as a server', () => {
  it('deletes an entry that lists a tree artifact and a symlink at one path, and one that is no ActionResult', async () => {
    const dir = await tempDir();
    const tree = Buffer.from(reapi.Tree.encode({ root: { files: [{ name: 'BUILD', digest: digestOf(Buffer.from('x')) }] } }));
    await plantBlob(dir, tree);
    const entry = await plantResult(dir, {
      outputDirectories: [{ path: TREE_PATH, treeDigest: digestOf(tree) }],
      outputSymlinks: [{ path: TREE_PATH, target: '../../../../pkg' }],
    });
    const cache = await DiskCache.open(dir);
    expect(await cache.lookup(ACTION, kinds({ [TREE_PATH]: 'directory' }))).toBeUndefined();
    expect(await exists(entry)).toBe(false);

    const garbage = await plant(dir, 'ac', ACTION.hash, Buffer.from([0xff, 0xff, 0xff]));
    const reopened = await DiskCache.open(dir);
    expect(await reopened.lookup(ACTION, kinds({ [TREE_PATH]: 'directory' }))).toBeUndefined();
    expect(await exists(garbage)).toBe(false);
  });

  it('deletes an entry whose Tree is a bomb, without expanding it', async () => {
    const dir = await tempDir();
    let level: reapi.DirectoryInit = { files: [{ name: 'f', digest: digestOf(Buffer.from('x')) }] };
    const children: reapi.DirectoryInit[] = [];
    for (let i = 0; i < 26; i++) {
      children.push(level);
      const digest = digestOf(Buffer.from(reapi.Directory.encode(level)));
      level = {
        directories: [
          { name: 'a', digest },
          { name: 'b', digest },
        ],
      };
    }
    const tree = Buffer.from(reapi.Tree.encode({ root: level, children }));
    await plantBlob(dir, tree);
    const entry = await plantResult(dir, { outputDirectories: [{ path: TREE_PATH, treeDigest: digestOf(tree) }] });
    const cache = await DiskCache.open(dir);
    expect(await cache.lookup(ACTION, kinds({ [TREE_PATH]: 'directory' }))).toBeUndefined();
    expect(await exists(entry)).toBe(false);
  });

  it('keeps an entry whose file blob is merely gone (a miss), and deletes one for another kind of output', async () => {
    const dir = await tempDir();
    const entry = await plantResult(dir, { outputFiles: [{ path: FILE_PATH, digest: digestOf(Buffer.from('gone')) }] });
    const cache = await DiskCache.open(dir);
    expect(await cache.lookup(ACTION, kinds({ [FILE_PATH]: 'file' }))).toBeUndefined();
    expect(await exists(entry)).toBe(true);
    expect(await cache.lookup(ACTION, kinds({ [FILE_PATH]: 'directory' }))).toBeUndefined();
    expect(await exists(entry)).toBe(false);
  });

  it('streams a large blob to its output checked, and deletes a corrupt one instead of writing it', async () => {
    const dir = await tempDir();
    const execRoot = await tempDir();
    const data = Buffer.alloc(1024 * 1024, 'large output\n');
    const blobFile = await plantBlob(dir, data);
    await plantResult(dir, { outputFiles: [{ path: FILE_PATH, digest: digestOf(data) }] });
    const cache = await DiskCache.open(dir);
    const outputs = await cache.lookup(ACTION, kinds({ [FILE_PATH]: 'file' }));
    expect(outputs).toEqual([{ path: FILE_PATH, digest: digestOf(data), isExecutable: false }]);
    expect(await cache.restore(outputs!, execRoot)).toBe(true);
    expect((await readFile(join(execRoot, FILE_PATH))).equals(data)).toBe(true);

    // Same size, other bytes: found only while copying.
    await rm(join(execRoot, FILE_PATH));
    await writeFile(blobFile, Buffer.from(data).fill('X', 500_000, 500_001));
    expect(await cache.restore(outputs!, execRoot)).toBe(false);
    expect(await exists(blobFile)).toBe(false);
    expect(await readdir(join(execRoot, 'bazel-out/k8-fastbuild/bin/pkg'))).toEqual([]);
  });
});
