import { closeSync, openSync, readSync } from 'node:fs';

/** The line the test setup script writes after its header; the test's own output follows it. */
const HEADER_END = '\n-----------------------------------------------------------------------------\n';

/**
 * Follows a running test's log (`--test_output=streamed`): every `intervalMs` it passes what the test
 * wrote since the last look, after the setup script's header, to `write`; `stop` passes the rest.
 * The log is a file in the execroot in every local strategy (a sandboxed test's log directory is a
 * host directory mounted into the sandbox), so it can be read while the test runs.
 */
export class TestLogTail {
  private offset = 0;
  private pending = '';
  private inBody = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly path: string,
    private readonly write: (text: string) => void,
    intervalMs = 100,
  ) {
    this.timer = setInterval(() => this.poll(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.poll();
    if (this.inBody && this.pending !== '') this.write(this.pending);
    this.pending = '';
  }

  private poll(): void {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return; // not written yet
    }
    try {
      const buffer = Buffer.alloc(64 * 1024);
      for (;;) {
        const n = readSync(fd, buffer, 0, buffer.length, this.offset);
        if (n <= 0) break;
        this.offset += n;
        this.take(buffer.subarray(0, n).toString('utf8'));
      }
    } finally {
      closeSync(fd);
    }
  }

  private take(text: string): void {
    if (this.inBody) {
      this.write(text);
      return;
    }
    this.pending += text;
    const at = this.pending.indexOf(HEADER_END);
    if (at < 0) return;
    this.inBody = true;
    const body = this.pending.slice(at + HEADER_END.length);
    this.pending = '';
    if (body !== '') this.write(body);
  }
}
