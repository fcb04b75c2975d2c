import { randomUUID } from 'node:crypto';
import { link, lstat, mkdir, open, readdir, readFile, rename, rm, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { digestKey, type Digest } from '../digest/digest.js';
import { InternalError, NotFoundError, ResourceExhaustedError, StatusError } from '../status-error.js';
import type { BlobAccess, BlobAccessLogger, BlobRead, BlobWriter, ReadRange } from './blob-access.js';
import type { BlobPins } from './blob-pins.js';
import { resolveRange } from './read-range.js';

/** File systems allocate whole blocks; charging by block makes the budget match real disk use. */
const BLOCK_BYTES = 4096;
/** Inode and directory entry of each file. */
const FILE_OVERHEAD_BYTES = 512;
const TEMP_DIR = 'tmp';
const HASH_FILE_NAME = /^[0-9a-f]{64}$/;

/** Bytes a blob of `size` costs on disk, as charged against the budget. */
export function diskUsageOf(size: number): number {
  return Math.ceil(size / BLOCK_BYTES) * BLOCK_BYTES + FILE_OVERHEAD_BYTES;
}

export interface DiskBlobAccessOptions {
  /** Root directory; blobs live in `<path>/<keyspace>/<first 2 hex>/<hash>`. */
  readonly path: string;
  /** Budget in bytes as counted by diskUsageOf; least recently used blobs are deleted beyond it. */
  readonly maxBytes: number;
  /**
   * `cas`: content-addressed, a file's size is the blob's size and a lookup whose size differs is a
   * miss. `ac`: keyed by action digest hash; the content (an ActionResult) has its own size.
   */
  readonly keyspace?: 'cas' | 'ac';
  /** fsync each file before it becomes visible: survives power loss, costs a disk flush per blob. */
  readonly sync?: boolean;
  readonly logger?: BlobAccessLogger;
  /** Hears of each blob deleted to stay within the budget, with the bytes it was charged (metrics). */
  readonly onEvict?: (blobs: number, bytes: number) => void;
  /**
   * Blobs never evicted while pinned. When only pinned blobs are left the store stays over its
   * budget until their pins end (the next write evicts them then): a blob a client relies on wins.
   */
  readonly pins?: BlobPins;
}

interface Entry {
  /** Size of the content in bytes. */
  size: number;
  /** Bytes charged against the budget. */
  usage: number;
}

/**
 * Blobs as files, the layout of Bazel's --disk_cache (DESIGN.md): `cas/ab/abcd...`, `ac/ab/abcd...`.
 *
 * Invariants:
 * - A blob file appears only by linking (CAS) or renaming (AC) a complete temp file from
 *   `<keyspace>/tmp/`, so readers never see a partial blob, and a crash leaves at most temp files,
 *   which `open` deletes.
 * - The in-memory index lists exactly the blob files this process knows; `open` rebuilds it by scanning
 *   (oldest modification first in LRU order) and deletes files that are not named like blobs.
 * - Every byte of every blob file, rounded to blocks, counts against maxBytes, and so does the full size
 *   of every CAS upload in progress; eviction deletes least recently used blobs until the total fits.
 * - One process per directory: two stores on the same path would delete each other's temp files.
 * - Renames and deletions of one hash run one after another, so an eviction can never delete a file
 *   that a concurrent put of the same blob has just renamed into place.
 */
export class DiskBlobAccess implements BlobAccess {
  /** Insertion order is LRU order: the first key is the least recently used. */
  private readonly index = new Map<string, Entry>();
  private usedBytes = 0;
  /** Charged to uploads in progress (their temp files), so the budget holds while they run. */
  private reservedBytes = 0;
  /** Per-hash chain of file operations (rename, unlink) that must not interleave. */
  private readonly fileOps = new Map<string, Promise<void>>();
  private readonly dir: string;
  private readonly tempDir: string;
  private readonly contentAddressed: boolean;

  private constructor(private readonly options: DiskBlobAccessOptions) {
    this.dir = join(options.path, options.keyspace ?? 'cas');
    this.tempDir = join(this.dir, TEMP_DIR);
    this.contentAddressed = (options.keyspace ?? 'cas') === 'cas';
  }

  /** Opens (creating if needed) a store: removes leftover temp files and rebuilds the index from disk. */
  static async open(options: DiskBlobAccessOptions): Promise<DiskBlobAccess> {
    const store = new DiskBlobAccess(options);
    await store.scan();
    return store;
  }

  /** Blob count and bytes charged to stored blobs, for tests and metrics. */
  get usage(): { blobs: number; bytes: number } {
    return { blobs: this.index.size, bytes: this.usedBytes };
  }

  /** Bytes charged to uploads that have begun and not yet been committed or aborted. */
  get uploadingBytes(): number {
    return this.reservedBytes;
  }

  async get(digest: Digest): Promise<Buffer> {
    const path = this.lookup(digest);
    try {
      // A CAS file's size is known from the index and its content never legitimately changes, so one
      // read of size + 1 bytes replaces readFile's stat (the extra byte exposes a file that grew, which
      // verification then rejects). An AC file can be replaced at any moment: read it whole.
      return this.contentAddressed ? await readKnownSize(path, digest.sizeBytes) : await readFile(path);
    } catch (e) {
      throw this.readError(e, digest);
    }
  }

  async read(digest: Digest, range?: ReadRange): Promise<BlobRead> {
    const path = this.lookup(digest);
    let file: FileHandle;
    try {
      file = await open(path, 'r');
    } catch (e) {
      throw this.readError(e, digest);
    }
    try {
      const { size } = await file.stat();
      const resolved = resolveRange(size, range);
      return { sizeBytes: size, chunks: readChunks(file, resolved.start, resolved.end, resolved.chunkSize) };
    } catch (e) {
      await file.close();
      throw e;
    }
  }

  async put(digest: Digest, data: Buffer): Promise<void> {
    this.checkFits(digest, data.length);
    if (this.contentAddressed && this.has(digest)) {
      this.touch(digest.hash); // uploading it again counts as a use
      return;
    }
    const temp = this.tempPath();
    try {
      if (this.options.sync) {
        const file = await open(temp, 'w');
        try {
          await file.writeFile(data);
          await file.sync();
        } finally {
          await file.close();
        }
      } else {
        await writeFile(temp, data);
      }
    } catch (e) {
      await unlink(temp).catch(() => undefined);
      throw storageError(e, `writing blob ${digestKey(digest)}`);
    }
    await this.install(temp, digest.hash, data.length);
  }

  async beginWrite(digest: Digest): Promise<BlobWriter> {
    // The action cache does not know an upload's size in advance; only the CAS can reserve room.
    const reserved = this.contentAddressed ? this.reserve(digest) : 0;
    const release = () => {
      this.reservedBytes -= reserved;
    };
    const temp = this.tempPath();
    let file: FileHandle;
    try {
      file = await open(temp, 'w');
    } catch (e) {
      release();
      throw storageError(e, `starting upload of ${digestKey(digest)}`);
    }
    return new DiskBlobWriter(file, temp, this.options.sync ?? false, release, (size) => this.install(temp, digest.hash, size));
  }

  async findMissing(digests: readonly Digest[]): Promise<Digest[]> {
    return digests.filter((d) => {
      if (!this.has(d)) return true;
      this.touch(d.hash);
      return false;
    });
  }

  async delete(digest: Digest): Promise<void> {
    const entry = this.index.get(digest.hash);
    if (!entry) return;
    this.forget(digest.hash, entry);
    await this.removeFile(digest.hash);
  }

  // ----- internals -----

  private blobPath(hash: string): string {
    return join(this.dir, hash.slice(0, 2), hash);
  }

  private tempPath(): string {
    return join(this.tempDir, randomUUID());
  }

  private has(digest: Digest): boolean {
    const entry = this.index.get(digest.hash);
    return entry !== undefined && (!this.contentAddressed || entry.size === digest.sizeBytes);
  }

  /** The path of a known blob, marked as used; NotFound otherwise. */
  private lookup(digest: Digest): string {
    if (!this.has(digest)) throw new NotFoundError(`blob ${digestKey(digest)} not found`);
    this.touch(digest.hash);
    return this.blobPath(digest.hash);
  }

  private touch(hash: string): void {
    const entry = this.index.get(hash);
    if (!entry) return;
    this.index.delete(hash);
    this.index.set(hash, entry);
  }

  private forget(hash: string, entry: Entry): void {
    this.index.delete(hash);
    this.usedBytes -= entry.usage;
  }

  /** Charges an upload's future file to the budget, evicting to make room. */
  private reserve(digest: Digest): number {
    this.checkFits(digest, digest.sizeBytes);
    const usage = diskUsageOf(digest.sizeBytes);
    if (this.reservedBytes + usage > this.options.maxBytes) {
      throw new ResourceExhaustedError(`disk store is full of uploads in progress (${this.reservedBytes} bytes); retry ${digestKey(digest)} later`, 1000);
    }
    this.reservedBytes += usage;
    this.evict();
    return usage;
  }

  private checkFits(digest: Digest | string, size: number): void {
    if (diskUsageOf(size) > this.options.maxBytes) {
      const name = typeof digest === 'string' ? digest : digestKey(digest);
      throw new ResourceExhaustedError(`blob ${name} (${size} bytes) exceeds the disk store's budget of ${this.options.maxBytes} bytes`);
    }
  }

  /** A file that vanished under us (deleted by hand, or evicted mid-read) is a miss, and forgotten. */
  private readError(e: unknown, digest: Digest): Error {
    if (isNoEntry(e)) {
      const entry = this.index.get(digest.hash);
      if (entry) this.forget(digest.hash, entry);
      return new NotFoundError(`blob ${digestKey(digest)} not found`);
    }
    return storageError(e, `reading blob ${digestKey(digest)}`);
  }

  /** Runs `op` after every earlier file operation on the same hash has finished. */
  private serialized(hash: string, op: () => Promise<void>): Promise<void> {
    const previous = this.fileOps.get(hash) ?? Promise.resolve();
    const next = previous.then(op, op);
    const tail = next.catch(() => undefined);
    this.fileOps.set(hash, tail);
    void tail.then(() => {
      if (this.fileOps.get(hash) === tail) this.fileOps.delete(hash);
    });
    return next;
  }

  /** Moves a complete temp file into place, records it, and evicts what no longer fits. */
  private async install(temp: string, hash: string, size: number): Promise<void> {
    try {
      this.checkFits(hash, size);
    } catch (e) {
      await unlink(temp).catch(() => undefined);
      throw e;
    }
    await this.serialized(hash, async () => {
      try {
        await this.moveIntoPlace(temp, this.blobPath(hash));
      } catch (e) {
        await unlink(temp).catch(() => undefined);
        throw storageError(e, `storing blob ${hash}`);
      }
      const previous = this.index.get(hash);
      if (previous) this.forget(hash, previous);
      const usage = diskUsageOf(size);
      this.index.set(hash, { size, usage });
      this.usedBytes += usage;
    });
    this.evict(hash);
  }

  /**
   * Makes a complete temp file visible under its final name, atomically. The CAS hard-links and then
   * unlinks the temp name: as atomic as rename, and on ext4 several times faster for fresh files, because
   * rename forces the delayed block allocation of the file's data. A file already under that name is
   * replaced by rename: its name is its hash, but not its proof (a truncated copy, bit rot, or one
   * planted by whoever can write the directory, which put() was asked to store because it did not
   * check out). The action cache replaces results, so it renames.
   */
  private async moveIntoPlace(temp: string, final: string): Promise<void> {
    if (this.contentAddressed) {
      try {
        await link(temp, final);
        await unlink(temp);
        return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
    }
    await rename(temp, final);
  }

  /** Deletes least recently used blobs until the budget holds; never the blob just stored, nor a pinned one. */
  private evict(keep?: string): void {
    for (const [hash, entry] of this.index) {
      if (this.usedBytes + this.reservedBytes <= this.options.maxBytes) return;
      if (hash === keep || this.options.pins?.isPinned(hash)) continue;
      this.forget(hash, entry);
      this.options.onEvict?.(1, entry.usage);
      void this.removeFile(hash);
    }
  }

  private removeFile(hash: string): Promise<void> {
    return this.serialized(hash, async () => {
      // The blob may have been stored again since it was forgotten: then the file is live, keep it.
      if (this.index.has(hash)) return;
      try {
        await unlink(this.blobPath(hash));
      } catch (e) {
        if (!isNoEntry(e)) this.options.logger?.warn(`disk store: could not delete ${this.blobPath(hash)}: ${(e as Error).message}`);
      }
    });
  }

  /**
   * Makes `path` a real directory: a symlink or file there (planted by whoever else can write the
   * store's directory) is removed, never followed, so no blob is written or read through it. Checked
   * once, at open: the store's directory is its own (one process per directory), so nothing swaps it later.
   */
  private async realDirectory(path: string): Promise<void> {
    const found = await lstat(path).catch(() => undefined);
    if (found?.isDirectory()) return;
    if (found) {
      this.options.logger?.warn(`disk store: replacing ${path}, which is not a directory`);
      await rm(path, { recursive: true, force: true });
    }
    await mkdir(path, { recursive: true });
  }

  /** Creates the layout, deletes temp files and stray files, and loads every blob into the index. */
  private async scan(): Promise<void> {
    await this.realDirectory(this.dir);
    await rm(this.tempDir, { recursive: true, force: true });
    await mkdir(this.tempDir);
    const found: { hash: string; size: number; mtimeMs: number }[] = [];
    const prefixes = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
    await Promise.all(
      prefixes.map(async (prefix) => {
        const sub = join(this.dir, prefix);
        await this.realDirectory(sub);
        for (const name of await readdir(sub)) {
          const path = join(sub, name);
          // lstat: a symlink named like a blob is no blob file of ours, and is removed like any stray entry.
          const info = await lstat(path).catch(() => undefined);
          if (!info) continue;
          if (!info.isFile() || !HASH_FILE_NAME.test(name) || !name.startsWith(prefix)) {
            this.options.logger?.warn(`disk store: removing ${path}, which is not a blob file`);
            await rm(path, { recursive: true, force: true });
            continue;
          }
          found.push({ hash: name, size: info.size, mtimeMs: info.mtimeMs });
        }
      }),
    );
    found.sort((a, b) => a.mtimeMs - b.mtimeMs || (a.hash < b.hash ? -1 : 1));
    for (const { hash, size } of found) {
      const usage = diskUsageOf(size);
      this.index.set(hash, { size, usage });
      this.usedBytes += usage;
    }
    this.evict();
    await Promise.all([...this.fileOps.values()]);
  }
}

/** Up to `size + 1` bytes of a file: exactly its content when it has the expected size. */
async function readKnownSize(path: string, size: number): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(size + 1);
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await file.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  } finally {
    await file.close();
  }
}

/** Streams bytes [start, end) of an open file, closing it when done or abandoned. */
async function* readChunks(file: FileHandle, start: number, end: number, chunkSize: number): AsyncGenerator<Buffer> {
  try {
    let pos = start;
    while (pos < end) {
      const buffer = Buffer.allocUnsafe(Math.min(chunkSize, end - pos));
      const { bytesRead } = await file.read(buffer, 0, buffer.length, pos);
      if (bytesRead === 0) throw new InternalError(`blob file shrank while being read (at byte ${pos} of ${end})`);
      pos += bytesRead;
      yield bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead);
    }
  } finally {
    await file.close();
  }
}

/** An upload into a temp file; commit renames it into place through the store. */
class DiskBlobWriter implements BlobWriter {
  private written = 0;
  private closed = false;

  constructor(
    private readonly file: FileHandle,
    private readonly temp: string,
    private readonly sync: boolean,
    /** Gives back the upload's reservation; called exactly once, at commit or abort. */
    private readonly release: () => void,
    private readonly installAs: (size: number) => Promise<void>,
  ) {}

  get writtenBytes(): number {
    return this.written;
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (this.closed) throw new InternalError('write after the upload was committed or aborted');
    let offset = 0;
    try {
      while (offset < chunk.byteLength) {
        const { bytesWritten } = await this.file.write(chunk, offset, chunk.byteLength - offset, this.written + offset);
        offset += bytesWritten;
      }
    } catch (e) {
      throw storageError(e, 'writing upload');
    }
    this.written += chunk.byteLength;
  }

  async commit(): Promise<void> {
    if (this.closed) throw new InternalError('commit after the upload was committed or aborted');
    this.closed = true;
    this.release();
    try {
      if (this.sync) await this.file.sync();
      await this.file.close();
    } catch (e) {
      await this.file.close().catch(() => undefined);
      await unlink(this.temp).catch(() => undefined);
      throw storageError(e, 'finishing upload');
    }
    await this.installAs(this.written);
  }

  async abort(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.release();
    await this.file.close().catch(() => undefined);
    await unlink(this.temp).catch(() => undefined);
  }
}

function isNoEntry(e: unknown): boolean {
  return (e as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/** Disk full is RESOURCE_EXHAUSTED (a client may retry later); other I/O failures are INTERNAL. */
function storageError(e: unknown, doing: string): Error {
  if (e instanceof StatusError) return e;
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const message = `${doing}: ${e instanceof Error ? e.message : String(e)}`;
  if (code === 'ENOSPC' || code === 'EDQUOT') return new ResourceExhaustedError(message);
  return new InternalError(message);
}
