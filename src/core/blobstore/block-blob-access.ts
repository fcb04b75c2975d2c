import fs from 'node:fs';
import { mkdir, open, readdir, rm, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { digestKey, type Digest } from '../digest/digest.js';
import { InternalError, InvalidArgumentError, NotFoundError, ResourceExhaustedError, StatusError } from '../status-error.js';
import type { BlobAccess, BlobAccessLogger, BlobRead, BlobWriter, ReadRange } from './blob-access.js';
import {
  dataCrc,
  decodeHeader,
  encodeHeader,
  encodeHeaderInto,
  encodeTrailer,
  encodeTrailerInto,
  HEADER_BYTES,
  HEADER_MAGIC_BYTES,
  recordBytes,
  TRAILER_BYTES,
  trailerCommits,
  type RecordKind,
} from './block-record.js';
import { BufferedBlobWriter } from './buffered-blob-writer.js';
import { resolveRange } from './read-range.js';

/** File systems allocate whole 4 KiB blocks, plus an inode and directory entry per file. */
const FS_BLOCK_BYTES = 4096;
const FILE_OVERHEAD_BYTES = 512;
const BLOCK_FILE_NAME = /^(\d{10})\.blk$/;
/** Blobs up to this size read from the oldest blocks are copied forward (refresh-on-read). */
const REFRESH_LIMIT_BYTES = 4 * 1024 * 1024;
/** Reads of blobs up to this size that arrive together are merged into few large reads. */
const COALESCE_LIMIT_BYTES = 64 * 1024;
/** Merged reads span at most this many bytes, and skip gaps of at most COALESCE_GAP_BYTES. */
const COALESCE_SPAN_BYTES = 1024 * 1024;
const COALESCE_GAP_BYTES = 16 * 1024;
/** Reading a block on start, this many bytes at a time. */
const SCAN_BUFFER_BYTES = 4 * 1024 * 1024;

export interface BlockBlobAccessOptions {
  /** Root directory; block files live in `<path>/<keyspace>-blocks/`. */
  readonly path: string;
  /** Budget for all block files (sizes rounded up to 4 KiB, plus 512 bytes each); oldest blocks go first. */
  readonly maxBytes: number;
  /** Size at which a block is closed and a new one begun; maxBytes / 16 (64 KiB .. 256 MiB) by default. */
  readonly blockSizeBytes?: number;
  /** `cas`: a lookup whose size differs is a miss. `ac`: keyed by hash only; a new value replaces the old. */
  readonly keyspace?: 'cas' | 'ac';
  /** fsync each write batch and each finished upload before it becomes visible. Default false. */
  readonly sync?: boolean;
  readonly logger?: BlobAccessLogger;
}

/** What the store needs of a block's file. */
interface BlockFile {
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  write(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesWritten: number }>;
  writev(buffers: Buffer[], position: number): Promise<{ bytesWritten: number }>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

/** One block file: records appended, never rewritten, deleted as a whole. */
interface Block {
  readonly seq: number;
  readonly path: string;
  readonly file: BlockFile;
  /** End of the last allocated record: the file's logical size. */
  size: number;
  /** Keys whose current record lives in this block. */
  readonly keys: Set<string>;
  /** Write batches and uploads in flight into this block; it is not evicted while any run. */
  writers: number;
  /** Reads in progress; the file is closed when they are done, after eviction. */
  readers: number;
  evicted: boolean;
}

interface Entry {
  readonly block: Block;
  /** Position of the data (after the header) in the block file. */
  readonly dataOffset: number;
  readonly sizeBytes: number;
  readonly crc: number;
}

/** A small read waiting to be merged with its neighbours. */
interface PendingRead {
  readonly entry: Entry;
  readonly resolve: (data: Buffer) => void;
  readonly reject: (e: unknown) => void;
}

/** Records allocated back to back in one block, written with one writev. */
interface WriteBatch {
  readonly block: Block;
  readonly start: number;
  length: number;
  readonly buffers: Buffer[];
  readonly records: { key: string; kind: RecordKind; dataOffset: number; sizeBytes: number; crc: number }[];
  readonly done: Promise<void>;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * Blobs appended into a few large block files, in the style of Buildbarn's local blob access: a small
 * blob costs a slice of a write (puts arriving together share one `writev`), not a file.
 *
 * Invariants:
 * - A record is in the in-memory index only after every byte of it (header, data, trailer) is written
 *   (and fsynced, with `sync`), so a reader never sees a partial blob.
 * - On start the index is rebuilt by scanning every block in order: a record counts only if its header
 *   and data CRC-32s check out; one that does not is skipped; where the header chain breaks, the scan
 *   resumes at the next intact header, or truncates the block there (a torn tail). Later records replace earlier ones; tombstones record deletions.
 * - Space is taken synchronously when a write begins, in allocation order, so concurrent writers never
 *   overlap and the scan order on start is the order writes began.
 * - Every block file's full size counts against maxBytes; when over, the oldest blocks are deleted whole
 *   (never one with writes in flight, never the one being written). Blobs read from the oldest quarter
 *   of blocks are copied forward so that what is used survives eviction.
 * - One process per directory.
 */
export class BlockBlobAccess implements BlobAccess {
  private readonly index = new Map<string, Entry>();
  /** Oldest first; the last one receives new records. */
  private readonly blocks: Block[] = [];
  private usedBytes = 0;
  private nextSeq = 1;
  private batch: WriteBatch | undefined;
  private readonly refreshing = new Set<string>();
  /** Small reads of this turn of the event loop, by block. */
  private pendingReads = new Map<Block, PendingRead[]>();
  private readonly dir: string;
  private readonly contentAddressed: boolean;
  private readonly blockSize: number;

  private constructor(private readonly options: BlockBlobAccessOptions) {
    const keyspace = options.keyspace ?? 'cas';
    this.dir = join(options.path, `${keyspace}-blocks`);
    this.contentAddressed = keyspace === 'cas';
    this.blockSize = options.blockSizeBytes ?? Math.min(256 * 2 ** 20, Math.max(64 * 1024, Math.floor(options.maxBytes / 16)));
  }

  /** Opens (creating if needed) a store and rebuilds its index from the block files. */
  static async open(options: BlockBlobAccessOptions): Promise<BlockBlobAccess> {
    const store = new BlockBlobAccess(options);
    await store.scan();
    return store;
  }

  /** Blob count, bytes charged for block files, and the number of blocks, for tests and metrics. */
  get usage(): { blobs: number; bytes: number; blocks: number } {
    return { blobs: this.index.size, bytes: this.usedBytes, blocks: this.blocks.length };
  }

  /** Closes every block file. The store must not be used afterwards. */
  async close(): Promise<void> {
    await Promise.all(this.blocks.map((b) => b.file.close().catch(() => undefined)));
    this.blocks.length = 0;
    this.index.clear();
  }

  async get(digest: Digest): Promise<Buffer> {
    const entry = this.lookup(digest);
    const data = entry.sizeBytes <= COALESCE_LIMIT_BYTES ? await this.readSmall(entry) : await this.readEntry(entry, 0, entry.sizeBytes);
    // CAS content is checked with SHA-256 by VerifyingBlobAccess, which every CAS stack has; a second,
    // CRC pass would cost ~0.8 ms per MiB served. Action cache values have no other check.
    if (!this.contentAddressed && dataCrc(data) !== entry.crc) {
      // The file changed under us (a disk fault, a hand edit): never serve it.
      this.options.logger?.warn(`block store: blob ${digestKey(digest)} in ${entry.block.path} fails its checksum; dropped`);
      await this.delete(digest);
      throw new NotFoundError(`blob ${digestKey(digest)} not found`);
    }
    this.refreshIfOld(digest.hash, entry, data);
    return data;
  }

  async read(digest: Digest, range?: ReadRange): Promise<BlobRead> {
    const entry = this.lookup(digest);
    const { start, end, chunkSize } = resolveRange(entry.sizeBytes, range);
    if (entry.sizeBytes <= REFRESH_LIMIT_BYTES && this.isOld(entry.block)) this.refreshIfOld(digest.hash, entry);
    entry.block.readers++;
    return { sizeBytes: entry.sizeBytes, chunks: this.readChunks(entry, start, end, chunkSize) };
  }

  async put(digest: Digest, data: Buffer): Promise<void> {
    this.checkFits(digest, data.length);
    if (this.contentAddressed && this.has(digest)) {
      this.refreshIfOld(digest.hash, this.index.get(digest.hash)!, data);
      return;
    }
    await this.append(digest.hash, 'blob', data);
  }

  async beginWrite(digest: Digest): Promise<BlobWriter> {
    // The action cache does not know a value's size in advance, and its values are small: buffer them.
    if (!this.contentAddressed) return new BufferedBlobWriter((data) => this.put(digest, data), this.options.maxBytes);
    this.checkFits(digest, digest.sizeBytes);
    const { block, offset } = this.allocate(recordBytes(digest.sizeBytes));
    block.writers++;
    const release = () => {
      block.writers--;
    };
    try {
      // The header goes first, so that a scan can step over this record if the upload never finishes.
      await writeAll(block.file, [encodeHeader({ kind: 'blob', hash: digest.hash, sizeBytes: digest.sizeBytes })], offset);
    } catch (e) {
      release();
      throw storageError(e, `starting upload of ${digestKey(digest)}`);
    }
    return new BlockBlobWriter(digest, block, offset, this.options.sync ?? false, release, (crc) =>
      this.install(digest.hash, { block, dataOffset: offset + HEADER_BYTES, sizeBytes: digest.sizeBytes, crc }),
    );
  }

  async findMissing(digests: readonly Digest[]): Promise<Digest[]> {
    return digests.filter((d) => {
      if (!this.has(d)) return true;
      const entry = this.index.get(d.hash)!;
      if (entry.sizeBytes <= REFRESH_LIMIT_BYTES) this.refreshIfOld(d.hash, entry);
      return false;
    });
  }

  async delete(digest: Digest): Promise<void> {
    const entry = this.index.get(digest.hash);
    if (!entry) return;
    this.forget(digest.hash, entry);
    // A tombstone, so that the blob does not come back on restart.
    await this.append(digest.hash, 'tombstone', Buffer.alloc(0));
  }

  // ----- lookups -----

  private has(digest: Digest): boolean {
    const entry = this.index.get(digest.hash);
    return entry !== undefined && (!this.contentAddressed || entry.sizeBytes === digest.sizeBytes);
  }

  private lookup(digest: Digest): Entry {
    const entry = this.index.get(digest.hash);
    if (!entry || (this.contentAddressed && entry.sizeBytes !== digest.sizeBytes)) {
      throw new NotFoundError(`blob ${digestKey(digest)} not found`);
    }
    return entry;
  }

  private forget(key: string, entry: Entry): void {
    if (this.index.get(key) === entry) this.index.delete(key);
    entry.block.keys.delete(key);
  }

  private async readEntry(entry: Entry, from: number, to: number): Promise<Buffer> {
    const block = entry.block;
    block.readers++;
    try {
      const buffer = Buffer.allocUnsafe(to - from);
      let filled = 0;
      while (filled < buffer.length) {
        const { bytesRead } = await block.file.read(buffer, filled, buffer.length - filled, entry.dataOffset + from + filled);
        if (bytesRead === 0) throw new InternalError(`block file ${block.path} is shorter than its index says`);
        filled += bytesRead;
      }
      return buffer;
    } catch (e) {
      throw storageError(e, `reading ${block.path}`);
    } finally {
      this.releaseReader(block);
    }
  }

  /**
   * Reads a small blob together with the other small reads of this turn of the event loop: blobs
   * written together sit side by side, so a batch read costs a few large reads, not one per blob.
   */
  private readSmall(entry: Entry): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      if (this.pendingReads.size === 0) setImmediate(() => this.flushReads());
      entry.block.readers++;
      const queue = this.pendingReads.get(entry.block);
      if (queue) queue.push({ entry, resolve, reject });
      else this.pendingReads.set(entry.block, [{ entry, resolve, reject }]);
    });
  }

  private flushReads(): void {
    const byBlock = this.pendingReads;
    this.pendingReads = new Map();
    for (const [block, reads] of byBlock) {
      reads.sort((a, b) => a.entry.dataOffset - b.entry.dataOffset);
      let run: PendingRead[] = [];
      let runStart = 0;
      let runEnd = 0;
      for (const read of reads) {
        const start = read.entry.dataOffset;
        const end = start + read.entry.sizeBytes;
        if (run.length > 0 && start - runEnd <= COALESCE_GAP_BYTES && Math.max(end, runEnd) - runStart <= COALESCE_SPAN_BYTES) {
          run.push(read);
          runEnd = Math.max(runEnd, end);
          continue;
        }
        if (run.length > 0) void this.readRun(block, run, runStart, runEnd);
        run = [read];
        runStart = start;
        runEnd = end;
      }
      if (run.length > 0) void this.readRun(block, run, runStart, runEnd);
    }
  }

  /** One read of bytes [start, end) of a block, handed out to the reads it covers. */
  private async readRun(block: Block, reads: PendingRead[], start: number, end: number): Promise<void> {
    try {
      const buffer = Buffer.allocUnsafe(end - start);
      let filled = 0;
      while (filled < buffer.length) {
        const { bytesRead } = await block.file.read(buffer, filled, buffer.length - filled, start + filled);
        if (bytesRead === 0) throw new InternalError(`block file ${block.path} is shorter than its index says`);
        filled += bytesRead;
      }
      for (const { entry, resolve } of reads) {
        const from = entry.dataOffset - start;
        const view = buffer.subarray(from, from + entry.sizeBytes);
        // A copy unless the blob is the whole buffer: a kept blob must not pin its neighbours.
        resolve(reads.length === 1 ? view : Buffer.from(view));
      }
    } catch (e) {
      const error = storageError(e, `reading ${block.path}`);
      for (const { reject } of reads) reject(error);
    } finally {
      for (let i = 0; i < reads.length; i++) this.releaseReader(block);
    }
  }

  private async *readChunks(entry: Entry, start: number, end: number, chunkSize: number): AsyncGenerator<Buffer> {
    const block = entry.block;
    try {
      for (let pos = start; pos < end; ) {
        const buffer = Buffer.allocUnsafe(Math.min(chunkSize, end - pos));
        const { bytesRead } = await block.file.read(buffer, 0, buffer.length, entry.dataOffset + pos);
        if (bytesRead === 0) throw new InternalError(`block file ${block.path} is shorter than its index says`);
        pos += bytesRead;
        yield bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead);
      }
    } finally {
      this.releaseReader(block);
    }
  }

  private releaseReader(block: Block): void {
    block.readers--;
    if (block.evicted && block.readers === 0) void block.file.close().catch(() => undefined);
  }

  // ----- writing -----

  /** Takes `bytes` at the end of the newest block, beginning a new block when it is full. */
  private allocate(bytes: number): { block: Block; offset: number } {
    let block = this.blocks.at(-1);
    if (!block || (block.size > 0 && block.size + bytes > this.blockSize)) block = this.beginBlock();
    const offset = block.size;
    this.usedBytes += charge(block.size + bytes) - charge(block.size);
    block.size += bytes;
    this.evict(block);
    return { block, offset };
  }

  /** The next block file. It is allocated now, in order; its file is created on first write. */
  private beginBlock(): Block {
    const seq = this.nextSeq++;
    const path = join(this.dir, `${String(seq).padStart(10, '0')}.blk`);
    const block: Block = {
      seq,
      path,
      file: new BlockFileDescriptor(path, 'w+', this.options.sync ?? false),
      size: 0,
      keys: new Set(),
      writers: 0,
      readers: 0,
      evicted: false,
    };
    this.blocks.push(block);
    this.usedBytes += charge(0);
    return block;
  }

  /**
   * Appends a whole record. Records begun in the same turn of the event loop share one write (and one
   * fsync): that is what makes many small blobs cheap.
   */
  private append(key: string, kind: RecordKind, data: Buffer): Promise<void> {
    const bytes = recordBytes(data.length);
    const { block, offset } = this.allocate(bytes);
    let batch = this.batch;
    if (!batch || batch.block !== block || batch.start + batch.length !== offset) {
      batch = this.newBatch(block, offset);
    }
    const crc = dataCrc(data);
    const header = { kind, hash: key, sizeBytes: data.length };
    if (data.length <= COALESCE_LIMIT_BYTES) {
      // One buffer per small record: a write of thousands of iovecs costs more than copying a few KiB.
      const record = Buffer.allocUnsafe(bytes);
      encodeHeaderInto(record, 0, header);
      data.copy(record, HEADER_BYTES);
      encodeTrailerInto(record, HEADER_BYTES + data.length, crc);
      batch.buffers.push(record);
    } else {
      batch.buffers.push(encodeHeader(header), data, encodeTrailer(crc));
    }
    batch.records.push({ key, kind, dataOffset: offset + HEADER_BYTES, sizeBytes: data.length, crc });
    batch.length += bytes;
    return batch.done;
  }

  private newBatch(block: Block, start: number): WriteBatch {
    let resolve!: () => void;
    let reject!: (e: unknown) => void;
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const batch: WriteBatch = { block, start, length: 0, buffers: [], records: [], done, resolve, reject };
    this.batch = batch;
    block.writers++;
    setImmediate(() => void this.flush(batch));
    return batch;
  }

  private async flush(batch: WriteBatch): Promise<void> {
    if (this.batch === batch) this.batch = undefined;
    try {
      await writeAll(batch.block.file, batch.buffers, batch.start);
      if (this.options.sync) await batch.block.file.sync();
      for (const r of batch.records) {
        if (r.kind === 'tombstone') continue;
        this.install(r.key, { block: batch.block, dataOffset: r.dataOffset, sizeBytes: r.sizeBytes, crc: r.crc });
      }
      batch.resolve();
    } catch (e) {
      batch.reject(storageError(e, `writing ${batch.block.path}`));
    } finally {
      batch.block.writers--;
    }
  }

  /**
   * Makes a fully written record visible, unless a record begun later for the same key is already
   * visible (writes can finish out of order; the scan on start follows the order they began).
   */
  private install(key: string, entry: Entry): void {
    if (entry.block.evicted) return;
    const current = this.index.get(key);
    if (current) {
      if (later(current, entry)) return;
      this.forget(key, current);
    }
    this.index.set(key, entry);
    entry.block.keys.add(key);
  }

  /** Deletes the oldest blocks while over budget; never `keep`, nor a block with writes in flight. */
  private evict(keep: Block): void {
    for (let i = 0; i < this.blocks.length && this.usedBytes > this.options.maxBytes; ) {
      const block = this.blocks[i]!;
      if (block === keep || block.writers > 0) {
        i++;
        continue;
      }
      this.blocks.splice(i, 1);
      this.dropBlock(block);
    }
  }

  private dropBlock(block: Block): void {
    block.evicted = true;
    this.usedBytes -= charge(block.size);
    for (const key of block.keys) {
      const entry = this.index.get(key);
      if (entry?.block === block) this.index.delete(key);
    }
    block.keys.clear();
    void rm(block.path, { force: true }).catch((e: Error) => this.options.logger?.warn(`block store: could not delete ${block.path}: ${e.message}`));
    if (block.readers === 0) void block.file.close().catch(() => undefined);
  }

  private isOld(block: Block): boolean {
    const oldest = this.blocks[0];
    if (!oldest || this.blocks.length < 4) return false;
    return block.seq - oldest.seq < Math.ceil(this.blocks.length / 4);
  }

  /** Copies a blob from one of the oldest blocks to the newest, so that a blob in use outlives its block. */
  private refreshIfOld(key: string, entry: Entry, data?: Buffer): void {
    if (!this.isOld(entry.block) || this.refreshing.has(key)) return;
    this.refreshing.add(key);
    void (async () => {
      const content = data ?? (await this.readEntry(entry, 0, entry.sizeBytes));
      if (this.index.get(key) !== entry || dataCrc(content) !== entry.crc) return;
      await this.append(key, 'blob', content);
    })()
      .catch((e: Error) => this.options.logger?.warn(`block store: could not refresh ${key}: ${e.message}`))
      .finally(() => this.refreshing.delete(key));
  }

  private checkFits(digest: Digest, size: number): void {
    if (charge(recordBytes(size)) > this.options.maxBytes) {
      throw new ResourceExhaustedError(`blob ${digestKey(digest)} (${size} bytes) exceeds the block store's budget of ${this.options.maxBytes} bytes`);
    }
  }

  // ----- start -----

  /** Loads every block in order, verifying each record, and truncates torn tails. New writes go to a new block. */
  private async scan(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const seqs: number[] = [];
    for (const name of await readdir(this.dir)) {
      const m = BLOCK_FILE_NAME.exec(name);
      if (m) {
        seqs.push(Number(m[1]));
      } else {
        this.options.logger?.warn(`block store: removing ${join(this.dir, name)}, which is not a block file`);
        await rm(join(this.dir, name), { recursive: true, force: true });
      }
    }
    seqs.sort((a, b) => a - b);
    for (const seq of seqs) {
      const path = join(this.dir, `${String(seq).padStart(10, '0')}.blk`);
      const block: Block = { seq, path, file: new BlockFileDescriptor(path, 'r+'), size: 0, keys: new Set(), writers: 0, readers: 0, evicted: false };
      this.blocks.push(block);
      const file = await open(path, 'r+');
      try {
        block.size = await this.scanBlock(block, file);
      } finally {
        await file.close();
      }
      this.usedBytes += charge(block.size);
      this.nextSeq = seq + 1;
    }
    const last = this.blocks.at(-1);
    if (last) this.evict(last);
    while (this.usedBytes > this.options.maxBytes && this.blocks.length > 0) this.dropBlock(this.blocks.shift()!);
  }

  /**
   * Indexes the valid records of a block; returns where its intact records end (truncating the rest).
   * A damaged stretch in the middle (a write that never reached the disk while a later one did: writes
   * of one block run concurrently) is stepped over to the next intact header.
   */
  private async scanBlock(block: Block, file: FileHandle): Promise<number> {
    const { size: fileSize } = await file.stat();
    const reader = new SequentialReader(file, fileSize);
    let pos = 0;
    let end = 0;
    while (pos + HEADER_BYTES <= fileSize) {
      const header = decodeHeader(await reader.bytes(pos, HEADER_BYTES));
      if (!header || pos + recordBytes(header.sizeBytes) > fileSize) {
        const next = await this.nextHeader(reader, pos + 1, fileSize);
        if (next === undefined) break;
        this.options.logger?.warn(`block store: ${block.path}: bytes ${pos}..${next} are not an intact record; skipped`);
        pos = next;
        continue;
      }
      let crc = 0;
      const dataOffset = pos + HEADER_BYTES;
      for (let at = 0; at < header.sizeBytes; ) {
        const piece = await reader.bytes(dataOffset + at, Math.min(SCAN_BUFFER_BYTES, header.sizeBytes - at));
        crc = dataCrc(piece, crc);
        at += piece.length;
      }
      const trailer = await reader.bytes(dataOffset + header.sizeBytes, TRAILER_BYTES);
      if (trailerCommits(trailer, crc)) {
        const current = this.index.get(header.hash);
        if (current) this.forget(header.hash, current);
        if (header.kind === 'blob') {
          this.index.set(header.hash, { block, dataOffset, sizeBytes: header.sizeBytes, crc });
          block.keys.add(header.hash);
        }
      }
      pos += recordBytes(header.sizeBytes);
      end = pos;
    }
    if (end < fileSize) {
      this.options.logger?.warn(`block store: ${block.path}: ${fileSize - end} bytes after offset ${end} are not intact records; truncated`);
      await file.truncate(end);
    }
    return end;
  }

  /** The offset of the first intact header (one that fits in the file) at or after `from`. */
  private async nextHeader(reader: SequentialReader, from: number, fileSize: number): Promise<number | undefined> {
    for (let windowStart = from; windowStart + HEADER_BYTES <= fileSize; ) {
      const window = await reader.bytes(windowStart, Math.min(SCAN_BUFFER_BYTES, fileSize - windowStart));
      for (let at = window.indexOf(HEADER_MAGIC_BYTES); at >= 0; at = window.indexOf(HEADER_MAGIC_BYTES, at + 1)) {
        const candidate = windowStart + at;
        if (candidate + HEADER_BYTES > fileSize) return undefined;
        // (A refill gives the reader a new buffer, so `window` stays valid.)
        const header = decodeHeader(await reader.bytes(candidate, HEADER_BYTES));
        if (header && candidate + recordBytes(header.sizeBytes) <= fileSize) return candidate;
      }
      if (windowStart + window.length >= fileSize) return undefined;
      windowStart += window.length - HEADER_BYTES; // overlap, so that a header across windows is found
    }
    return undefined;
  }
}

/** Whether `a` was allocated after `b`. */
function later(a: Entry, b: Entry): boolean {
  return a.block.seq !== b.block.seq ? a.block.seq > b.block.seq : a.dataOffset > b.dataOffset;
}

/** Bytes a block file of `size` bytes costs on disk. */
function charge(size: number): number {
  return Math.ceil(size / FS_BLOCK_BYTES) * FS_BLOCK_BYTES + FILE_OVERHEAD_BYTES;
}

/** Writes `buffers` back to back at `position`, finishing partial writes. */
async function writeAll(file: BlockFile, buffers: Buffer[], position: number): Promise<void> {
  let { bytesWritten } = await file.writev(buffers, position);
  const total = buffers.reduce((n, b) => n + b.length, 0);
  if (bytesWritten === total) return;
  const rest = Buffer.concat(buffers).subarray(bytesWritten);
  let done = 0;
  while (done < rest.length) {
    ({ bytesWritten } = await file.write(rest, done, rest.length - done, position + total - rest.length + done));
    done += bytesWritten;
  }
}

/**
 * A block's file, opened on first use: blocks are allocated synchronously (so that space is handed out
 * in order), but opening a file is asynchronous. It uses fs's callback API on a raw descriptor, which
 * costs a third of FileHandle's promise API per call (bench/cas: small blob reads).
 */
class BlockFileDescriptor implements BlockFile {
  private fd: Promise<number> | undefined;
  private closed = false;

  /**
   * @param flags `w+` for a new block, `r+` for one found on start
   * @param syncDirectory fsync the directory once a new block exists, so that the file survives power loss
   */
  constructor(
    private readonly path: string,
    private readonly flags: 'w+' | 'r+',
    private readonly syncDirectory = false,
  ) {}

  private descriptor(): Promise<number> {
    if (this.closed) return Promise.reject(new InternalError(`block file ${this.path} is closed`));
    this.fd ??= this.openFile();
    return this.fd;
  }

  private async openFile(): Promise<number> {
    const fd = await new Promise<number>((resolve, reject) => fs.open(this.path, this.flags, (e, fd) => (e ? reject(e) : resolve(fd))));
    if (this.syncDirectory) {
      const dir = await open(dirname(this.path), 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    }
    return fd;
  }

  async read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }> {
    const fd = await this.descriptor();
    return new Promise((resolve, reject) =>
      fs.read(fd, buffer, offset, length, position, (e, bytesRead) => (e ? reject(e) : resolve({ bytesRead }))),
    );
  }

  async write(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesWritten: number }> {
    const fd = await this.descriptor();
    return new Promise((resolve, reject) =>
      fs.write(fd, buffer, offset, length, position, (e, bytesWritten) => (e ? reject(e) : resolve({ bytesWritten }))),
    );
  }

  async writev(buffers: Buffer[], position: number): Promise<{ bytesWritten: number }> {
    const fd = await this.descriptor();
    return new Promise((resolve, reject) => fs.writev(fd, buffers, position, (e, bytesWritten) => (e ? reject(e) : resolve({ bytesWritten }))));
  }

  async sync(): Promise<void> {
    const fd = await this.descriptor();
    await new Promise<void>((resolve, reject) => fs.fsync(fd, (e) => (e ? reject(e) : resolve())));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (!this.fd) return;
    const fd = await this.fd;
    await new Promise<void>((resolve, reject) => fs.close(fd, (e) => (e ? reject(e) : resolve())));
  }
}

/** Reads a file front to back through one large buffer (scanning a block is mostly sequential). */
class SequentialReader {
  private buffer = Buffer.alloc(0);
  private bufferStart = 0;

  constructor(
    private readonly file: FileHandle,
    private readonly fileSize: number,
  ) {}

  /** `length` bytes at `position` (fewer at the end of the file); valid until the next call. */
  async bytes(position: number, length: number): Promise<Buffer> {
    const end = position + length;
    if (position < this.bufferStart || end > this.bufferStart + this.buffer.length) {
      const want = Math.min(Math.max(length, SCAN_BUFFER_BYTES), this.fileSize - position);
      const buffer = Buffer.allocUnsafe(Math.max(0, want));
      let filled = 0;
      while (filled < buffer.length) {
        const { bytesRead } = await this.file.read(buffer, filled, buffer.length - filled, position + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      this.buffer = buffer.subarray(0, filled);
      this.bufferStart = position;
    }
    return this.buffer.subarray(position - this.bufferStart, end - this.bufferStart);
  }
}

/** An upload straight into its reserved place in a block; the trailer written at commit makes it valid. */
class BlockBlobWriter implements BlobWriter {
  private written = 0;
  private crc = 0;
  private closed = false;

  constructor(
    private readonly digest: Digest,
    private readonly block: Block,
    private readonly recordOffset: number,
    private readonly sync: boolean,
    /** Called exactly once, at commit or abort. */
    private readonly release: () => void,
    private readonly installAs: (crc: number) => void,
  ) {}

  get writtenBytes(): number {
    return this.written;
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (this.closed) throw new InternalError('write after the upload was committed or aborted');
    if (this.written + chunk.byteLength > this.digest.sizeBytes) {
      throw new InvalidArgumentError(`blob ${digestKey(this.digest)}: upload exceeds the digest's size of ${this.digest.sizeBytes} bytes`);
    }
    const position = this.recordOffset + HEADER_BYTES + this.written;
    try {
      let done = 0;
      while (done < chunk.byteLength) {
        const { bytesWritten } = await this.block.file.write(chunk, done, chunk.byteLength - done, position + done);
        done += bytesWritten;
      }
    } catch (e) {
      throw storageError(e, 'writing upload');
    }
    this.crc = dataCrc(chunk, this.crc);
    this.written += chunk.byteLength;
  }

  async commit(): Promise<void> {
    if (this.closed) throw new InternalError('commit after the upload was committed or aborted');
    if (this.written !== this.digest.sizeBytes) {
      throw new InvalidArgumentError(`blob ${digestKey(this.digest)}: received ${this.written} bytes, but the digest says ${this.digest.sizeBytes}`);
    }
    this.closed = true;
    try {
      await writeAll(this.block.file, [encodeTrailer(this.crc)], this.recordOffset + HEADER_BYTES + this.written);
      if (this.sync) await this.block.file.sync();
      this.installAs(this.crc);
    } catch (e) {
      throw storageError(e, `finishing upload of ${digestKey(this.digest)}`);
    } finally {
      this.release();
    }
  }

  async abort(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // The reserved space stays (counted) until its block is evicted; the scan skips the record.
    this.release();
  }
}

/** Disk full is RESOURCE_EXHAUSTED (a client may retry later); other I/O failures are INTERNAL. */
function storageError(e: unknown, doing: string): Error {
  if (e instanceof StatusError) return e;
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const message = `${doing}: ${e instanceof Error ? e.message : String(e)}`;
  if (code === 'ENOSPC' || code === 'EDQUOT') return new ResourceExhaustedError(message);
  return new InternalError(message);
}
