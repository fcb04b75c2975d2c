import { readFully, storageError, type Block, type BlockEntry } from './block-file.js';

/** Reads of blobs up to this size that arrive together are merged into few large reads. */
export const COALESCE_LIMIT_BYTES = 64 * 1024;
/** Merged reads span at most this many bytes, and skip gaps of at most COALESCE_GAP_BYTES. */
const COALESCE_SPAN_BYTES = 1024 * 1024;
const COALESCE_GAP_BYTES = 16 * 1024;

/** A small read waiting to be merged with its neighbours. */
interface PendingRead {
  readonly entry: BlockEntry;
  readonly resolve: (data: Buffer) => void;
  readonly reject: (e: unknown) => void;
}

/**
 * Reads small blobs together with the other small reads of the same turn of the event loop: blobs
 * written together sit side by side, so a batch read costs a few large reads, not one per blob.
 * Each read holds its block as a reader (`block.readers`) until it is served; `releaseReader` is
 * called once per read.
 */
export class BlockReadCoalescer {
  /** Small reads of this turn of the event loop, by block. */
  private pending = new Map<Block, PendingRead[]>();

  constructor(private readonly releaseReader: (block: Block) => void) {}

  /** The data of `entry` (at most COALESCE_LIMIT_BYTES). */
  read(entry: BlockEntry): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) setImmediate(() => this.flush());
      entry.block.readers++;
      const queue = this.pending.get(entry.block);
      if (queue) queue.push({ entry, resolve, reject });
      else this.pending.set(entry.block, [{ entry, resolve, reject }]);
    });
  }

  private flush(): void {
    const byBlock = this.pending;
    this.pending = new Map();
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
      const buffer = await readFully(block, Buffer.allocUnsafe(end - start), start);
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
}
