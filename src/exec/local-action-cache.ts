import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { reapi } from '../core/index.js';

/** 02: keyed by localActionKey (01 was keyed by the REAPI Action digest). */
const MAGIC = Buffer.from('KILNAC02');

/**
 * The local action cache: local action key (see localActionKey, 64 hex digits) → ActionResult (the digests of the outputs it produced), kept
 * in memory and persisted as one file in the output base. A hit is only trusted by the executor once
 * the outputs on disk still have those digests.
 *
 * File format: MAGIC, then records of [32-byte action hash][u32 length][serialized ActionResult].
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

  get(key: string): reapi.ActionResult | undefined {
    const bytes = this.entries.get(key);
    if (!bytes) return undefined;
    try {
      return reapi.ActionResult.decode(bytes);
    } catch {
      this.remove(key);
      return undefined;
    }
  }

  put(key: string, result: reapi.ActionResultInit): void {
    this.entries.set(key, reapi.ActionResult.encode(result));
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
