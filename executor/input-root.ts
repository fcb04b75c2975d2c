import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { digestKey, digestOf, InvalidArgumentError, parseDigest, reapi, type Digest } from '../src/core/index.js';
import type { ExecutorCas } from './cas-client.js';
import { checkEntryName } from './directory-handle.js';
import type { FileCache, InputHandOut } from './file-cache.js';

/** Files linked at once, to bound open file handles. */
const LINK_CONCURRENCY = 64;

async function inBatches<T>(items: readonly T[], size: number, each: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(each));
}

/** Every name of one Directory is a single plain component, used once across files, directories and symlinks. */
function checkNames(directory: reapi.Directory, path: string): void {
  const where = `input directory ${JSON.stringify(path.slice(0, 120))}`;
  const names = new Set<string>();
  for (const { name } of [...directory.directories, ...directory.files, ...directory.symlinks]) {
    checkEntryName(name, where);
    if (names.has(name)) throw new InvalidArgumentError(`${where}: duplicate entry ${JSON.stringify(name.slice(0, 120))}`);
    names.add(name);
  }
}

/**
 * The Directory blobs an assignment carries (worker.proto `input_directories`), by their digest's key:
 * each is hashed here, so a blob is only ever used as the directory whose digest it has.
 */
export function directoriesByDigest(blobs: readonly Uint8Array[]): Map<string, Buffer> {
  // The empty Directory is no blob anyone need send.
  const out = new Map<string, Buffer>([[digestKey(digestOf(Buffer.alloc(0))), Buffer.alloc(0)]]);
  for (const blob of blobs) {
    const bytes = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
    out.set(digestKey(digestOf(bytes)), bytes);
  }
  return out;
}

/**
 * Lays out the input root `rootDigest` under `dir` (which exists and is empty): directories
 * created, files handed out by the file cache (hard links or verified copies, per `handOut`),
 * symlinks made as given; directories in `known` (by digest key) are not fetched. Nothing here follows a symlink on the host: every name is checked to be one
 * plain component used once per directory, so each path's parents are directories this function
 * made itself, and mkdir, link, symlink and exclusive creation never follow their last component.
 * No action runs in the directory meanwhile. Directories, symlinks and links are made with
 * synchronous calls: each is one short system call, and a thread-pool round trip per entry cost the
 * cluster's process more than the calls themselves (9% of its CPU on a cold build).
 */
export async function materializeInputRoot(
  cas: ExecutorCas,
  cache: FileCache,
  rootDigest: Digest,
  dir: string,
  handOut: InputHandOut = 'link',
  known: ReadonlyMap<string, Buffer> = new Map(),
): Promise<void> {
  let level: { digest: Digest; path: string; relative: string }[] = [{ digest: rootDigest, path: dir, relative: '' }];
  while (level.length > 0) {
    const unknown = level.filter((l) => !known.has(digestKey(l.digest))).map((l) => l.digest);
    const blobs = unknown.length > 0 ? await cas.getMany(unknown) : known;
    const next: typeof level = [];
    const files: { digest: Digest; executable: boolean; path: string }[] = [];
    for (const { digest, path, relative } of level) {
      const key = digestKey(digest);
      const directory = reapi.Directory.decode(known.get(key) ?? blobs.get(key)!);
      checkNames(directory, relative);
      for (const sub of directory.directories) {
        const subPath = join(path, sub.name);
        mkdirSync(subPath);
        next.push({ digest: parseDigest(sub.digest, 'DirectoryNode.digest'), path: subPath, relative: relative === '' ? sub.name : `${relative}/${sub.name}` });
      }
      for (const f of directory.files) files.push({ digest: parseDigest(f.digest, 'FileNode.digest'), executable: f.isExecutable, path: join(path, f.name) });
      for (const s of directory.symlinks) symlinkSync(s.target, join(path, s.name));
    }
    await inBatches(files, LINK_CONCURRENCY, (f) => cache.handOut(f.digest, f.executable, f.path, handOut));
    level = next;
  }
}
