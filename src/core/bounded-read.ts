import { closeSync, openSync, readSync } from 'node:fs';

/**
 * Reads a text file of at most `maxBytes` bytes; undefined when it holds more. Reads at most
 * `maxBytes + 1` bytes, so an endless file (`/dev/zero`, a FIFO that never closes its writer)
 * cannot exhaust memory. Throws the file system's error (ENOENT, EISDIR...) as readFileSync does.
 */
export function readTextUpTo(path: string, maxBytes: number): string | undefined {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(Math.min(maxBytes + 1, 1 << 20));
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) return undefined;
      chunks.push(Buffer.from(buffer.subarray(0, n)));
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
