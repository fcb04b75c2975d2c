import { spawn } from 'node:child_process';

export interface ProcessRequest {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
}

export interface ProcessResult {
  /** Exit code, or null when killed by a signal or never started. */
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: Buffer;
  readonly stderr: Buffer;
  /** Why the process could not start (ENOENT for a missing program...). */
  readonly startError?: string;
}

/** Output kept per stream; more is cut, so a chatty action cannot exhaust memory. */
const MAX_CAPTURED_BYTES = 8 * 1024 * 1024;

/** Runs argv to completion with exactly `env` (no inherited variables), capturing stdout and stderr. */
export function runProcess(request: ProcessRequest): Promise<ProcessResult> {
  return new Promise((resolve) => {
    const stdout = new Capture();
    const stderr = new Capture();
    const child = spawn(request.argv[0]!, request.argv.slice(1), {
      cwd: request.cwd,
      env: request.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (chunk: Buffer) => stdout.add(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.add(chunk));
    let startError: string | undefined;
    child.on('error', (e: NodeJS.ErrnoException) => {
      startError = e.code === 'ENOENT' ? `${request.argv[0]}: No such file or directory` : e.message;
    });
    child.on('close', (code, signal) => {
      resolve({ exitCode: startError ? null : code, signal, stdout: stdout.bytes(), stderr: stderr.bytes(), startError });
    });
  });
}

class Capture {
  private readonly chunks: Buffer[] = [];
  private size = 0;

  add(chunk: Buffer): void {
    if (this.size >= MAX_CAPTURED_BYTES) return;
    const kept = chunk.subarray(0, MAX_CAPTURED_BYTES - this.size);
    this.chunks.push(kept);
    this.size += kept.length;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks, this.size);
  }
}
