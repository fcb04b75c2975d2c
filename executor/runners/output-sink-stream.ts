import { createWriteStream, type WriteStream } from 'node:fs';
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { DEFAULT_OUTPUT_LIMIT_BYTES, type OutputSink } from '../../src/core/sandbox/index.js';

/**
 * A writable end for one demultiplexed container stream: into a file (created or truncated), into
 * memory up to the sink's limit (later bytes are dropped and `truncated` is set), or, for a spill
 * sink, into memory until the stream outgrows its bound and then all of it into the sink's file.
 */
export class OutputSinkStream extends Writable {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private readonly limit: number;
  private file: WriteStream | undefined;
  private fileClosed = false;
  truncated = false;

  constructor(private readonly sink: OutputSink) {
    super();
    this.limit = sink.kind === 'buffer' ? sink.limitBytes : sink.kind === 'spill' ? sink.memoryBytes : DEFAULT_OUTPUT_LIMIT_BYTES;
    this.file = sink.kind === 'file' ? createWriteStream(sink.path, { mode: 0o644 }) : undefined;
  }

  /** A spill sink's stream is in its file, not in `bytes()`. */
  get spilled(): boolean {
    return this.sink.kind === 'spill' && this.file !== undefined;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    if (!this.file && this.sink.kind === 'spill' && this.size + chunk.length > this.limit) {
      this.file = createWriteStream(this.sink.path, { mode: 0o644 });
      for (const kept of this.chunks) this.file.write(kept);
      this.chunks.length = 0;
      this.size = 0;
    }
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
    // Chunks still queued here (the file was slower than the container) go to the file first.
    if (!this.writableEnded) this.end();
    await finished(this);
    const file = this.file;
    if (!file || this.fileClosed) return;
    this.fileClosed = true;
    await new Promise<void>((resolve, reject) => file.end((error?: Error | null) => (error ? reject(error) : resolve())));
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks, this.size);
  }
}
