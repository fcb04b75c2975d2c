import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { digestKey, type Digest } from '../digest/digest.js';
import { InternalError, NotFoundError, ResourceExhaustedError } from '../status-error.js';
import type { BlobAccess, BlobAccessLogger, BlobRead, BlobWriter, ReadRange } from './blob-access.js';
import { BlockBlobWriter } from './block-blob-writer.js';
import { charge, later, newBlock, readFully, storageError, type Block, type BlockEntry } from './block-file.js';
import { BlockReadCoalescer, COALESCE_LIMIT_BYTES } from './block-read-coalescer.js';
import { dataCrc, HEADER_BYTES, recordBytes, type RecordKind } from './block-record.js';
import { scanBlockDirectory } from './block-scan.js';
import { BlockWriteBatcher, type WrittenRecord } from './block-write-batcher.js';
import { BufferedBlobWriter } from './buffered-blob-writer.js';
import { resolveRange } from './read-range.js';
import type { BlobPins } from './blob-pins.js';

/** Blobs up to this size read from the oldest blocks are copied forward (refresh-on-read). */
const REFRESH_LIMIT_BYTES = 4 * 1024 * 1024;

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
  /** Hears of each block deleted to stay within the budget: its blobs and the bytes it was charged (metrics). */
  readonly onEvict?: (blobs: number, bytes: number) => void;
  /**
   * Blobs never evicted while pinned (BlobPins: what clients were told exists, inputs just uploaded).
   * The oldest block's pinned blobs are copied forward before it is deleted; a block mostly pinned
   * stays, and the next oldest goes instead. When only pinned data is left the store stays over its
   * budget until the pins end, as the disk store does: a blob a client relies on wins.
   */
  readonly pins?: BlobPins;
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
 *   of blocks are copied forward so that what is used survives eviction; pinned blobs (`pins`) are
 *   copied forward before their block is deleted, and a mostly pinned block is not deleted at all.
 * - One process per directory.
 */
export class BlockBlobAccess implements BlobAccess {
  private readonly index = new Map<string, BlockEntry>();
  /** Oldest first; the last one receives new records. */
  private readonly blocks: Block[] = [];
  private usedBytes = 0;
  /** Bytes of blocks being rescued (their pinned blobs copied forward), released once they are deleted. */
  private releasingBytes = 0;
  private nextSeq = 1;
  private readonly refreshing = new Set<string>();
  private readonly coalescer = new BlockReadCoalescer((block) => this.releaseReader(block));
  private readonly batcher: BlockWriteBatcher;
  private readonly dir: string;
  private readonly contentAddressed: boolean;
  private readonly blockSize: number;

  private constructor(private readonly options: BlockBlobAccessOptions) {
    const keyspace = options.keyspace ?? 'cas';
    this.dir = join(options.path, `${keyspace}-blocks`);
    this.contentAddressed = keyspace === 'cas';
    this.blockSize = options.blockSizeBytes ?? Math.min(256 * 2 ** 20, Math.max(64 * 1024, Math.floor(options.maxBytes / 16)));
    this.batcher = new BlockWriteBatcher(options.sync ?? false, (block, records) => this.installWritten(block, records));
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
    const data = entry.sizeBytes <= COALESCE_LIMIT_BYTES ? await this.coalescer.read(entry) : await this.readEntry(entry, 0, entry.sizeBytes);
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
    return { sizeBytes: entry.sizeBytes, chunks: this.readChunks(entry, start, end, chunkSize, range?.scratch) };
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
    return BlockBlobWriter.begin(digest, block, offset, this.options.sync ?? false, release, (crc) =>
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

  private lookup(digest: Digest): BlockEntry {
    const entry = this.index.get(digest.hash);
    if (!entry || (this.contentAddressed && entry.sizeBytes !== digest.sizeBytes)) {
      throw new NotFoundError(`blob ${digestKey(digest)} not found`);
    }
    return entry;
  }

  private forget(key: string, entry: BlockEntry): void {
    if (this.index.get(key) === entry) this.index.delete(key);
    entry.block.keys.delete(key);
  }

  private async readEntry(entry: BlockEntry, from: number, to: number): Promise<Buffer> {
    const block = entry.block;
    block.readers++;
    try {
      return await readFully(block, Buffer.allocUnsafe(to - from), entry.dataOffset + from);
    } catch (e) {
      throw storageError(e, `reading ${block.path}`);
    } finally {
      this.releaseReader(block);
    }
  }

  private async *readChunks(entry: BlockEntry, start: number, end: number, chunkSize: number, scratch?: Buffer): AsyncGenerator<Buffer> {
    const block = entry.block;
    try {
      for (let pos = start; pos < end; ) {
        const length = Math.min(chunkSize, end - pos);
        // A large buffer per chunk is memory outside V8's heap, and each 64 MiB of it triggers a
        // garbage collection: a reader that gives a scratch buffer saves both.
        const buffer = scratch && scratch.length >= length ? scratch.subarray(0, length) : Buffer.allocUnsafe(length);
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
    const block = newBlock(this.dir, seq, 'w+', this.options.sync ?? false);
    this.blocks.push(block);
    this.usedBytes += charge(0);
    return block;
  }

  /** Appends a whole record; records begun in the same turn of the event loop share one write (BlockWriteBatcher). */
  private append(key: string, kind: RecordKind, data: Buffer): Promise<void> {
    const { block, offset } = this.allocate(recordBytes(data.length));
    return this.batcher.write(block, offset, key, kind, data);
  }

  private installWritten(block: Block, records: readonly WrittenRecord[]): void {
    for (const r of records) {
      if (r.kind === 'tombstone') continue;
      this.install(r.key, { block, dataOffset: r.dataOffset, sizeBytes: r.sizeBytes, crc: r.crc });
    }
  }

  /**
   * Makes a fully written record visible, unless a record begun later for the same key is already
   * visible (writes can finish out of order; the scan on start follows the order they began).
   */
  private install(key: string, entry: BlockEntry): void {
    if (entry.block.evicted) return;
    const current = this.index.get(key);
    if (current) {
      if (later(current, entry)) return;
      this.forget(key, current);
    }
    this.index.set(key, entry);
    entry.block.keys.add(key);
  }

  /**
   * Deletes the oldest blocks while over budget; never `keep`, nor a block with writes in flight. A
   * block holding pinned blobs is rescued instead (its pinned blobs copied forward, then it goes) when
   * they are at most half of it, and kept otherwise.
   */
  private evict(keep: Block): void {
    for (let i = 0; i < this.blocks.length && this.usedBytes - this.releasingBytes > this.options.maxBytes; ) {
      const block = this.blocks[i]!;
      if (block === keep || block.writers > 0 || block.rescuing) {
        i++;
        continue;
      }
      const pinned = this.pinnedIn(block);
      if (pinned.length > 0) {
        i++;
        const pinnedBytes = pinned.reduce((sum, [, entry]) => sum + recordBytes(entry.sizeBytes), 0);
        if (pinnedBytes * 2 <= block.size) this.rescue(block, pinned);
        continue;
      }
      this.blocks.splice(i, 1);
      this.dropEvicted(block);
    }
  }

  private dropEvicted(block: Block): void {
    const blobs = block.keys.size;
    const bytes = charge(block.size);
    this.dropBlock(block);
    this.options.onEvict?.(blobs, bytes);
  }

  /** The blobs of `block` (their current records) that are pinned now. */
  private pinnedIn(block: Block): [string, BlockEntry][] {
    const pins = this.options.pins;
    if (!pins || !this.contentAddressed) return [];
    const out: [string, BlockEntry][] = [];
    for (const key of block.keys) {
      const entry = this.index.get(key);
      if (entry?.block === block && pins.isPinned(key)) out.push([key, entry]);
    }
    return out;
  }

  /**
   * Copies the pinned blobs of `block` to the newest block, then deletes it. Until then its bytes count
   * as being released, so that eviction does not delete more blocks meanwhile; its blobs stay readable
   * from it until their copies are visible.
   */
  private rescue(block: Block, pinned: readonly [string, BlockEntry][]): void {
    block.rescuing = true;
    const releasing = charge(block.size);
    this.releasingBytes += releasing;
    block.readers++;
    void (async () => {
      for (const [key, entry] of pinned) {
        if (this.index.get(key) !== entry) continue; // replaced or deleted meanwhile
        const content = await this.readEntry(entry, 0, entry.sizeBytes);
        if (dataCrc(content) !== entry.crc) continue;
        await this.append(key, 'blob', content);
      }
    })()
      .catch((e: Error) => this.options.logger?.warn(`block store: could not copy the pinned blobs of ${block.path} forward: ${e.message}`))
      .finally(() => {
        this.releasingBytes -= releasing;
        block.rescuing = false;
        this.releaseReader(block);
        const at = this.blocks.indexOf(block);
        // A blob pinned while its block was rescued is rescued by the next eviction: the block stays until then.
        if (at >= 0 && !block.evicted && this.pinnedIn(block).length === 0 && block.writers === 0) {
          this.blocks.splice(at, 1);
          this.dropEvicted(block);
        }
        const newest = this.blocks.at(-1);
        if (newest) this.evict(newest);
      });
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
  private refreshIfOld(key: string, entry: BlockEntry, data?: Buffer): void {
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

  /** Rebuilds the index from the block files (see `scanBlockDirectory`). New writes go to a new block. */
  private async scan(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const blocks = await scanBlockDirectory(this.dir, this.options.logger, ({ header, block, dataOffset, crc }) => {
      const current = this.index.get(header.hash);
      if (current) this.forget(header.hash, current);
      if (header.kind === 'blob') {
        this.index.set(header.hash, { block, dataOffset, sizeBytes: header.sizeBytes, crc });
        block.keys.add(header.hash);
      }
    });
    for (const block of blocks) {
      this.blocks.push(block);
      this.usedBytes += charge(block.size);
      this.nextSeq = block.seq + 1;
    }
    const last = this.blocks.at(-1);
    if (last) this.evict(last);
    while (this.usedBytes > this.options.maxBytes && this.blocks.length > 0) this.dropBlock(this.blocks.shift()!);
  }
}
