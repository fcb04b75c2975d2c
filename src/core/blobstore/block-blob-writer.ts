import { digestKey, type Digest } from '../digest/digest.js';
import { InternalError, InvalidArgumentError } from '../status-error.js';
import type { BlobWriter } from './blob-access.js';
import { storageError, writeAll, type Block } from './block-file.js';
import { dataCrc, encodeHeader, encodeTrailer, HEADER_BYTES } from './block-record.js';

/** An upload straight into its reserved place in a block; the trailer written at commit makes it valid. */
export class BlockBlobWriter implements BlobWriter {
  private written = 0;
  private crc = 0;
  private closed = false;

  /**
   * Writes the record's header at `recordOffset` (space the store reserved for the whole record), so
   * that a scan can step over the record if the upload never finishes, and returns the writer.
   * `release` is called exactly once: at commit or abort, or here if the header cannot be written.
   */
  static async begin(
    digest: Digest,
    block: Block,
    recordOffset: number,
    sync: boolean,
    release: () => void,
    installAs: (crc: number) => void,
  ): Promise<BlockBlobWriter> {
    try {
      await writeAll(block.file, [encodeHeader({ kind: 'blob', hash: digest.hash, sizeBytes: digest.sizeBytes })], recordOffset);
    } catch (e) {
      release();
      throw storageError(e, `starting upload of ${digestKey(digest)}`);
    }
    return new BlockBlobWriter(digest, block, recordOffset, sync, release, installAs);
  }

  private constructor(
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
