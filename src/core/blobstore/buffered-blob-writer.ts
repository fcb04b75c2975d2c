import { InvalidArgumentError, ResourceExhaustedError } from '../status-error.js';
import type { BlobWriter } from './blob-access.js';

/**
 * A BlobWriter that collects chunks in memory and hands the whole blob to `store` on commit.
 * Used by stores whose blobs live in memory anyway.
 */
export class BufferedBlobWriter implements BlobWriter {
  private chunks: Buffer[] = [];
  private written = 0;
  private closed = false;

  /**
   * @param store receives the whole blob at commit
   * @param limitBytes uploads growing past this fail early with RESOURCE_EXHAUSTED instead of filling memory
   */
  constructor(
    private readonly store: (data: Buffer) => Promise<void>,
    private readonly limitBytes = Number.MAX_SAFE_INTEGER,
  ) {}

  get writtenBytes(): number {
    return this.written;
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (this.closed) throw new InvalidArgumentError('write after the upload was committed or aborted');
    if (this.written + chunk.byteLength > this.limitBytes) {
      await this.abort();
      throw new ResourceExhaustedError(`upload exceeds the store's limit of ${this.limitBytes} bytes`);
    }
    // Copy: the caller's chunk is usually a view into a larger gRPC message buffer.
    this.chunks.push(Buffer.from(chunk));
    this.written += chunk.byteLength;
  }

  async commit(): Promise<void> {
    if (this.closed) throw new InvalidArgumentError('commit after the upload was committed or aborted');
    this.closed = true;
    const data = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.written);
    this.chunks = [];
    await this.store(data);
  }

  async abort(): Promise<void> {
    this.closed = true;
    this.chunks = [];
  }
}
