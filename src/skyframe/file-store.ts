import { ByteReader, ByteWriter, readChecksummedFile, writeChecksummedFile } from '../core/index.js';
import type { PersistedEntry, PersistentStore } from './evaluator.js';

/** Writes an entry may go unused before it is dropped (see FileStore). */
const DEFAULT_RETAIN_RUNS = 8;

/** The layout's name and number. */
const MAGIC = 'KILNSTOR\u0004';

/**
 * A PersistentStore in one binary file (checksummed, replaced atomically: see checksummed-file.ts),
 * read once on first use and written at most once per run. After the writer's `version` come a
 * table of distinct (id, fingerprint) pairs, then per key its inputs and its persisted dependencies
 * (both as table indices) and its encoded data. Opening scans only keys and offsets; an entry's inputs are decoded when it is
 * asked for, and its data is a view of the file that the caller decodes once the inputs check out,
 * so a run pays for the entries it uses. Entries kept from the file are written back byte for byte.
 * A file from another version, a damaged one, or none at all is an empty store.
 *
 * The file stays bounded: it counts the writes (`run`), and each entry keeps the last run that set or
 * read it; an entry nobody used in `retainRuns` writes (a deleted target, an old configuration) is
 * left out of the next one. An entry only read is refreshed once it is half that old, so a store that
 * serves every command without changing is not rewritten by each.
 */
export class FileStore implements PersistentStore {
  private file: StoreFile | undefined;
  /** Entries set in this run (they win over the file's). */
  private readonly fresh = new Map<string, PersistedEntry>();
  /** Keys of the file read in this run. */
  private readonly used = new Set<string>();
  private dirty = false;

  constructor(
    private readonly path: string,
    private readonly version: string,
    private readonly retainRuns = DEFAULT_RETAIN_RUNS,
  ) {}

  get(key: string): PersistedEntry | undefined {
    const fresh = this.fresh.get(key);
    if (fresh) return fresh;
    const file = this.stored();
    const entry = file.entry(key);
    if (entry) {
      this.used.add(key);
      if (file.run - file.lastUsed(key) >= this.retainRuns / 2) this.dirty = true;
    }
    return entry;
  }

  set(key: string, entry: PersistedEntry): void {
    this.fresh.set(key, entry);
    this.dirty = true;
  }

  /** Writes the file when anything was set since the last flush. */
  flush(): void {
    if (!this.dirty) return;
    const pairs = new PairTable();
    const old = this.stored();
    const run = old.run + 1;
    const lastUsed = (k: string) => (this.used.has(k) ? run : old.lastUsed(k));
    const keys = [...old.keys()].filter((k) => !this.fresh.has(k) && run - lastUsed(k) <= this.retainRuns);
    // Each entry's data goes out as its own part: records are never copied into one big buffer.
    const parts: Uint8Array[] = [];
    const entry = (key: string, used: number, inputs: readonly number[], deps: readonly number[], data: Uint8Array) => {
      const w = new ByteWriter(key.length + 64);
      w.string(key);
      w.uint(used);
      for (const list of [inputs, deps]) {
        w.uint(list.length);
        for (const i of list) w.uint(i);
      }
      w.uint(data.length);
      parts.push(w.finish(), data);
    };
    for (const key of keys) {
      const { inputs, deps, data } = old.raw(key);
      const reindex = (list: readonly number[]) => list.map((i) => pairs.index(old.pair(i)));
      entry(key, lastUsed(key), reindex(inputs), reindex(deps), data);
    }
    for (const [key, { inputs, deps, data }] of this.fresh) {
      const index = (list: readonly (readonly [string, string])[]) => list.map((p) => pairs.index(p));
      entry(key, run, index(inputs), index(deps), data);
    }
    const head = new ByteWriter(1 << 16);
    head.string(this.version);
    head.uint(run);
    pairs.write(head);
    head.uint(keys.length + this.fresh.size);
    writeChecksummedFile(this.path, MAGIC, [head.finish(), ...parts]);
    this.dirty = false;
    this.file = undefined;
    this.fresh.clear();
    this.used.clear();
  }

  private stored(): StoreFile {
    this.file ??= StoreFile.open(this.path, this.version);
    return this.file;
  }
}

/** The (input id, fingerprint) pairs of the file being written, each once. */
class PairTable {
  private readonly indices = new Map<string, number>();
  private readonly list: (readonly [string, string])[] = [];

  index(pair: readonly [string, string]): number {
    const k = `${pair[0]}\u0000${pair[1]}`;
    let i = this.indices.get(k);
    if (i === undefined) {
      i = this.list.length;
      this.indices.set(k, i);
      this.list.push(pair);
    }
    return i;
  }

  write(w: ByteWriter): void {
    w.uint(this.list.length);
    for (const [id, fp] of this.list) {
      w.string(id);
      w.string(fp);
    }
  }
}

/** A store file as read: where each pair and each entry starts, decoded on demand. */
class StoreFile {
  private readonly pairs: (readonly [string, string] | undefined)[];

  private constructor(
    private readonly bytes: Buffer,
    /** How many times the file was written. */
    readonly run: number,
    private readonly pairOffsets: readonly number[],
    /** Where each entry's record starts (after its key), and the last run that used it. */
    private readonly entryOffsets: ReadonlyMap<string, { readonly at: number; readonly used: number }>,
  ) {
    this.pairs = new Array(pairOffsets.length);
  }

  static empty(): StoreFile {
    return new StoreFile(Buffer.alloc(0), 0, [], new Map());
  }

  lastUsed(key: string): number {
    return this.entryOffsets.get(key)?.used ?? 0;
  }

  static open(path: string, version: string): StoreFile {
    const bytes = readChecksummedFile(path, MAGIC);
    if (bytes === undefined) return StoreFile.empty();
    try {
      const r = new ByteReader(bytes);
      if (r.string() !== version) return StoreFile.empty();
      const run = r.uint();
      const pairOffsets: number[] = [];
      for (let n = r.uint(); n > 0; n--) {
        pairOffsets.push(r.pos);
        r.skipString();
        r.skipString();
      }
      const entryOffsets = new Map<string, { at: number; used: number }>();
      for (let n = r.uint(); n > 0; n--) {
        const key = r.string();
        const used = r.uint();
        entryOffsets.set(key, { at: r.pos, used });
        for (let list = 0; list < 2; list++) for (let i = r.uint(); i > 0; i--) if (r.uint() >= pairOffsets.length) return StoreFile.empty();
        r.skip(r.uint());
      }
      return new StoreFile(bytes, run, pairOffsets, entryOffsets);
    } catch {
      return StoreFile.empty(); // checksum right but layout wrong: written by a broken build
    }
  }

  keys(): Iterable<string> {
    return this.entryOffsets.keys();
  }

  entry(key: string): PersistedEntry | undefined {
    if (!this.entryOffsets.has(key)) return undefined;
    try {
      const { inputs, deps, data } = this.raw(key);
      return { inputs: inputs.map((i) => this.pair(i)), deps: deps.map((i) => this.pair(i)), data };
    } catch {
      return undefined;
    }
  }

  /** An entry's pair indices (inputs, persisted dependencies) and data, undecoded. */
  raw(key: string): { inputs: number[]; deps: number[]; data: Buffer } {
    const r = new ByteReader(this.bytes, this.entryOffsets.get(key)!.at);
    const list = () => Array.from({ length: r.uint() }, () => r.uint());
    const inputs = list();
    return { inputs, deps: list(), data: r.bytes(r.uint()) };
  }

  pair(i: number): readonly [string, string] {
    let p = this.pairs[i];
    if (p === undefined) {
      const r = new ByteReader(this.bytes, this.pairOffsets[i]!);
      const id = r.string();
      p = [id, r.string()];
      this.pairs[i] = p;
    }
    return p;
  }
}
