import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ProducedOutput } from '../actions/index.js';

/**
 * 03: values are JSON output lists (02 held serialized REAPI ActionResults, which made every null
 * build load the protobuf runtime just to read them); 01 was keyed by the REAPI Action digest.
 */
const MAGIC = Buffer.from('KILNAC03');

/**
 * One output as stored: [path, SHA-256 hex, size, executable], and a fifth element `1` when the
 * result was left on the remote server (builds without the bytes): the file need not be on disk.
 * A tree artifact is [path, StoredTree], a symlink [path, {s: target}].
 */
type StoredOutput =
  | [string, string, number, boolean]
  | [string, string, number, boolean, 1]
  | [string, StoredTree | { s: string }]
  | [string, StoredTree | { s: string }, 1];

/** A tree's contents: files [path, hash, size, executable], symlinks [path, target], directories. */
interface StoredTree {
  f: [string, string, number, boolean][];
  l: [string, string][];
  d: string[];
}

function storedOutput(o: ProducedOutput, remoteOnly: boolean): StoredOutput {
  if (o.kind !== undefined) {
    const t = o.kind === 'tree' ? o.tree : undefined;
    const value = t
      ? {
          f: t.files.map((f): [string, string, number, boolean] => [f.path, f.digest.hash, f.digest.sizeBytes, f.isExecutable]),
          l: t.symlinks.map((l): [string, string] => [l.path, l.target]),
          d: [...t.directories],
        }
      : { s: (o as { target: string }).target };
    return remoteOnly ? [o.path, value, 1] : [o.path, value];
  }
  return remoteOnly ? [o.path, o.digest.hash, o.digest.sizeBytes, o.isExecutable, 1] : [o.path, o.digest.hash, o.digest.sizeBytes, o.isExecutable];
}

function cachedOutput(s: StoredOutput): ProducedOutput {
  const [path, second] = s;
  if (typeof second === 'object') {
    if ('s' in second) return { kind: 'symlink', path, target: second.s };
    return {
      kind: 'tree',
      path,
      tree: {
        files: second.f.map(([p, hash, sizeBytes, isExecutable]) => ({ path: p, digest: { hash, sizeBytes }, isExecutable })),
        symlinks: second.l.map(([p, target]) => ({ path: p, target })),
        directories: second.d,
      },
    };
  }
  return { path, digest: { hash: second, sizeBytes: s[2] as number }, isExecutable: s[3] as boolean };
}

/** What the cache recorded for an action. */
interface RecordedResult {
  readonly outputs: ProducedOutput[];
  /** The outputs were left on the remote server; those not on disk are fetched when needed. */
  readonly remoteOnly: boolean;
}

/**
 * The local action cache: local action key (see localActionKey, 64 hex digits) → the outputs the
 * action produced (path, digest, executable bit), kept in memory and persisted as one file in the
 * output base. A hit is only trusted by the executor once the outputs on disk still have those
 * digests. Only successful actions are stored, so no exit code is kept. The disk and remote caches
 * hold REAPI ActionResults; this one is Kiln's own and stays cheap to read.
 *
 * File format: MAGIC, then records of [32-byte key][u32 length][UTF-8 JSON of StoredOutput[]].
 * `save` writes a temp file and renames it, so a crash keeps the previous cache whole.
 */
export class LocalActionCache {
  private dirty = false;

  private constructor(
    private readonly file: string | undefined,
    private readonly entries: Map<string, Buffer>,
  ) {}

  static inMemory(): LocalActionCache {
    return new LocalActionCache(undefined, new Map());
  }

  /** Loads the cache at `file`; a missing, foreign or truncated file starts empty (all actions run). */
  static async load(file: string): Promise<LocalActionCache> {
    const entries = new Map<string, Buffer>();
    try {
      const data = await readFile(file);
      if (data.subarray(0, MAGIC.length).equals(MAGIC)) {
        let at = MAGIC.length;
        while (at + 36 <= data.length) {
          const hash = data.toString('hex', at, at + 32);
          const length = data.readUInt32LE(at + 32);
          if (at + 36 + length > data.length) break;
          entries.set(hash, data.subarray(at + 36, at + 36 + length));
          at += 36 + length;
        }
      }
    } catch {
      // no cache yet
    }
    return new LocalActionCache(file, entries);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The result recorded for `key`; undefined when absent or unreadable (then dropped). */
  get(key: string): RecordedResult | undefined {
    const bytes = this.entries.get(key);
    if (!bytes) return undefined;
    try {
      const stored = JSON.parse(bytes.toString('utf8')) as StoredOutput[];
      return {
        outputs: stored.map(cachedOutput),
        remoteOnly: stored.some((s) => (typeof s[1] === 'object' ? s[2] === 1 : s[4] === 1)),
      };
    } catch {
      this.remove(key);
      return undefined;
    }
  }

  put(key: string, outputs: readonly ProducedOutput[], remoteOnly = false): void {
    const stored: StoredOutput[] = outputs.map((o) => storedOutput(o, remoteOnly));
    this.entries.set(key, Buffer.from(JSON.stringify(stored)));
    this.dirty = true;
  }

  remove(key: string): void {
    if (this.entries.delete(key)) this.dirty = true;
  }

  async save(): Promise<void> {
    if (!this.file || !this.dirty) return;
    const parts: Buffer[] = [MAGIC];
    for (const [hash, bytes] of this.entries) {
      const header = Buffer.alloc(36);
      header.write(hash, 0, 'hex');
      header.writeUInt32LE(bytes.length, 32);
      parts.push(header, bytes);
    }
    await mkdir(dirname(this.file), { recursive: true });
    const temp = `${this.file}.${process.pid}.tmp`;
    await writeFile(temp, Buffer.concat(parts));
    await rename(temp, this.file);
    this.dirty = false;
  }
}
