import { execFile } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Socket } from 'node:net';
import { promisify } from 'node:util';

/**
 * A named pipe through which a running process streams output to Kiln (`kiln test
 * --test_output=streamed`): what the process writes reaches `receive` as it is written, read by the
 * event loop (no polling). Kiln holds the read end open from before the process starts, so the
 * process's open never blocks; the pipe is read until the last writer closes it.
 */
export class LiveOutputPipe {
  private ended = false;

  private constructor(
    readonly path: string,
    private readonly socket: Socket,
    private readonly closed: Promise<void>,
  ) {}

  /** Makes the pipe at `path` (a fresh name in a directory the action owns) and starts reading it. */
  static async open(path: string, receive: (chunk: Buffer) => void): Promise<LiveOutputPipe> {
    // Node has no mkfifo; coreutils' is everywhere Kiln runs processes.
    await promisify(execFile)('mkfifo', ['-m', '600', path]);
    // Non-blocking: a read end opens at once, with no writer yet.
    const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const socket = new Socket({ fd, readable: true, writable: false });
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const pipe = new LiveOutputPipe(path, socket, closed);
    socket.on('data', receive);
    socket.once('end', () => (pipe.ended = true));
    // A read error ends the stream like its end; the process's own output (test.log) is unaffected.
    socket.on('error', () => socket.destroy());
    return pipe;
  }

  /**
   * Called once the process has ended: delivers what is still buffered in the pipe, then closes and
   * removes it. A pipe no writer ever opened would never see an end, so Kiln opens and closes a write
   * end itself; after the process's writers are gone that end comes after all their output.
   */
  async close(): Promise<void> {
    if (!this.ended && !this.socket.destroyed) {
      try {
        closeSync(openSync(this.path, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // ENXIO: the read end is already closed (the stream ended meanwhile).
      }
    }
    await this.closed;
    await rm(this.path, { force: true });
  }
}
