import { storageError, writeAll, type Block } from './block-file.js';
import { dataCrc, encodeHeader, encodeHeaderInto, encodeTrailer, encodeTrailerInto, HEADER_BYTES, recordBytes, type RecordKind } from './block-record.js';

/** Records up to this data size are assembled in one buffer: a writev of thousands of iovecs costs more than copying a few KiB. */
const ASSEMBLE_LIMIT_BYTES = 64 * 1024;

/** A record written by a batch, reported once the batch is on disk. */
export interface WrittenRecord {
  readonly key: string;
  readonly kind: RecordKind;
  readonly dataOffset: number;
  readonly sizeBytes: number;
  readonly crc: number;
}

/** Records allocated back to back in one block, written with one writev. */
interface WriteBatch {
  readonly block: Block;
  readonly start: number;
  length: number;
  readonly buffers: Buffer[];
  readonly records: WrittenRecord[];
  readonly done: Promise<void>;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * Writes whole records into the space the store allocated for them. Records allocated back to back in
 * the same turn of the event loop share one `writev` (and one fsync with `sync`): that is what makes
 * many small blobs cheap. A batch holds its block as a writer (`block.writers`) until it is written;
 * `written` is called with the batch's records after the write (and fsync) finished, before the
 * callers' promises resolve.
 */
export class BlockWriteBatcher {
  private batch: WriteBatch | undefined;

  constructor(
    private readonly sync: boolean,
    private readonly written: (block: Block, records: readonly WrittenRecord[]) => void,
  ) {}

  /** Writes the record `key`/`kind`/`data` at `offset` of `block` (space the caller allocated). */
  write(block: Block, offset: number, key: string, kind: RecordKind, data: Buffer): Promise<void> {
    let batch = this.batch;
    if (!batch || batch.block !== block || batch.start + batch.length !== offset) batch = this.newBatch(block, offset);
    const bytes = recordBytes(data.length);
    const crc = dataCrc(data);
    const header = { kind, hash: key, sizeBytes: data.length };
    if (data.length <= ASSEMBLE_LIMIT_BYTES) {
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
      if (this.sync) await batch.block.file.sync();
      this.written(batch.block, batch.records);
      batch.resolve();
    } catch (e) {
      batch.reject(storageError(e, `writing ${batch.block.path}`));
    } finally {
      batch.block.writers--;
    }
  }
}
