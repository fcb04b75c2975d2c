import { appendFileSync, closeSync, createWriteStream, openSync, type WriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { DEFAULT_OUTPUT_LIMIT_BYTES, type OutputSink, type ProcessResult } from './process-runner.js';

/**
 * One output stream of a child process. A file sink hands the child a file descriptor directly
 * (no copying through Kiln); a buffer sink collects from a pipe up to its limit and keeps
 * draining beyond it so the child never blocks on a full pipe; a spill sink collects from a pipe
 * and moves everything into its file once the stream outgrows its memory bound.
 */
export class OutputCapture {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private fd: number | undefined;
  private readonly limit: number;
  private spill: WriteStream | undefined;
  private spillError: Error | undefined;
  truncated = false;

  constructor(private readonly sink: OutputSink | undefined) {
    this.limit = sink?.kind === 'buffer' ? sink.limitBytes : sink?.kind === 'spill' ? sink.memoryBytes : DEFAULT_OUTPUT_LIMIT_BYTES;
    if (sink?.kind === 'file') this.fd = openSync(sink.path, 'w', 0o644);
  }

  /** What to pass as this stream in `spawn`'s `stdio`. */
  get stdio(): number | 'pipe' {
    return this.fd ?? 'pipe';
  }

  /** The stream's bytes are in the spill sink's file, not in `bytes()`. */
  get spilled(): boolean {
    return this.spill !== undefined;
  }

  attach(stream: Readable | null): void {
    stream?.on('data', (chunk: Buffer) => {
      // A slow disk must not make us buffer a fast writer's output: hold the pipe until it drains.
      if (!this.append(chunk) && this.spill) {
        stream.pause();
        this.spill.once('drain', () => stream.resume());
      }
    });
  }

  /** Keeps (or writes on) a chunk; false when the spill file asks to wait for a drain. */
  append(chunk: Buffer): boolean {
    if (this.spill) return this.spill.write(chunk);
    const room = this.limit - this.size;
    if (chunk.length > room && this.sink?.kind === 'spill') return this.startSpill(this.sink.path, chunk);
    if (room <= 0) {
      if (chunk.length > 0) this.truncated = true;
      return true;
    }
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (kept.length < chunk.length) this.truncated = true;
    this.chunks.push(kept);
    this.size += kept.length;
    return true;
  }

  private startSpill(path: string, chunk: Buffer): boolean {
    const file = createWriteStream(path, { mode: 0o644 });
    file.on('error', (e) => (this.spillError ??= e));
    this.spill = file;
    for (const kept of this.chunks) file.write(kept);
    this.chunks.length = 0;
    this.size = 0;
    return file.write(chunk);
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

  /** Once the child's streams have closed: the spill file, if any, is complete and closed. */
  async finish(): Promise<void> {
    const file = this.spill;
    if (!file) return;
    file.end();
    await finished(file).catch((e: Error) => (this.spillError ??= e));
    if (this.spillError) throw this.spillError;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks, this.size);
  }
}

/** A finished process's result, once both its streams are complete (a spill file closed). */
export async function capturedResult(
  out: OutputCapture,
  err: OutputCapture,
  status: Pick<ProcessResult, 'exitCode' | 'signal' | 'timedOut' | 'wallTimeMs'>,
): Promise<ProcessResult> {
  await Promise.all([out.finish(), err.finish()]);
  return {
    exitCode: status.exitCode,
    signal: status.signal,
    timedOut: status.timedOut,
    stdout: out.bytes(),
    stderr: err.bytes(),
    stdoutTruncated: out.truncated,
    stderrTruncated: err.truncated,
    ...(out.spilled ? { stdoutSpilled: true } : {}),
    ...(err.spilled ? { stderrSpilled: true } : {}),
    wallTimeMs: status.wallTimeMs,
  };
}
