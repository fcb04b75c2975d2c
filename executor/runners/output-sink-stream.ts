import { createWriteStream, type WriteStream } from 'node:fs';
import { Writable } from 'node:stream';
import { DEFAULT_OUTPUT_LIMIT_BYTES, type OutputSink } from '../../src/core/index.js';

/**
 * A writable end for one demultiplexed container stream: into a file (created or truncated), or
 * into memory up to the sink's limit (later bytes are dropped and `truncated` is set).
 */
export class OutputSinkStream extends Writable {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private readonly limit: number;
  private readonly file: WriteStream | undefined;
  private fileClosed = false;
  truncated = false;

  constructor(sink: OutputSink) {
    super();
    this.limit = sink.kind === 'buffer' ? sink.limitBytes : DEFAULT_OUTPUT_LIMIT_BYTES;
    this.file = sink.kind === 'file' ? createWriteStream(sink.path, { mode: 0o644 }) : undefined;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    if (this.file) {
      this.file.write(chunk, done);
      return;
    }
    const room = this.limit - this.size;
    const kept = chunk.length > room ? chunk.subarray(0, Math.max(room, 0)) : chunk;
    if (kept.length < chunk.length) this.truncated = true;
    if (kept.length > 0) {
      this.chunks.push(kept);
      this.size += kept.length;
    }
    done();
  }

  /** Flushes and closes the file, if any; safe to call again (the runner's cleanup does). */
  async finish(): Promise<void> {
    const file = this.file;
    if (!file || this.fileClosed) return;
    this.fileClosed = true;
    await new Promise<void>((resolve, reject) => file.end((error?: Error | null) => (error ? reject(error) : resolve())));
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks, this.size);
  }
}
