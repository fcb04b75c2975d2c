import { appendFileSync, closeSync, openSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { DEFAULT_OUTPUT_LIMIT_BYTES, type OutputSink } from './process-runner.js';

/**
 * One output stream of a child process. A file sink hands the child a file descriptor directly
 * (no copying through Kiln); a buffer sink collects from a pipe up to its limit and keeps
 * draining beyond it so the child never blocks on a full pipe.
 */
export class OutputCapture {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private fd: number | undefined;
  private readonly limit: number;
  truncated = false;

  constructor(private readonly sink: OutputSink | undefined) {
    this.limit = sink?.kind === 'buffer' ? sink.limitBytes : DEFAULT_OUTPUT_LIMIT_BYTES;
    if (sink?.kind === 'file') this.fd = openSync(sink.path, 'w', 0o644);
  }

  /** What to pass as this stream in `spawn`'s `stdio`. */
  get stdio(): number | 'pipe' {
    return this.fd ?? 'pipe';
  }

  attach(stream: Readable | null): void {
    stream?.on('data', (chunk: Buffer) => this.append(chunk));
  }

  append(chunk: Buffer): void {
    const room = this.limit - this.size;
    if (room <= 0) {
      if (chunk.length > 0) this.truncated = true;
      return;
    }
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (kept.length < chunk.length) this.truncated = true;
    this.chunks.push(kept);
    this.size += kept.length;
  }

  /** A message from Kiln itself (e.g. why the program could not start), into the sink. */
  note(text: string): void {
    if (this.sink?.kind === 'file') appendFileSync(this.sink.path, text);
    else this.append(Buffer.from(text));
  }

  /** Our copy of the descriptor is no longer needed once the child holds its own. */
  closeFile(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks, this.size);
  }
}
