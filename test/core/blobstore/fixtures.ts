import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { digestOf, type Digest } from '../../../src/core/index.js';
import type { BlobAccess, BlobAccessLogger } from '../../../src/core/blobstore/index.js';

export interface TestBlob {
  digest: Digest;
  data: Buffer;
}

/** A blob with its real digest. */
export function blob(content: string | Buffer): TestBlob {
  const data = typeof content === 'string' ? Buffer.from(content) : content;
  return { digest: digestOf(data), data };
}

/** `count` distinct blobs of `size` bytes each. */
export function blobs(count: number, size: number, seed = 'b'): TestBlob[] {
  return Array.from({ length: count }, (_, i) => {
    const data = Buffer.alloc(size, `${seed}${i}:`);
    return { digest: digestOf(data), data };
  });
}

/** Everything a BlobRead yields, concatenated. */
export async function readAll(store: BlobAccess, digest: Digest, range?: Parameters<BlobAccess['read']>[1]): Promise<Buffer> {
  const { chunks } = await store.read(digest, range);
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts);
}

/** A logger that keeps what it was told. */
export class RecordingLogger implements BlobAccessLogger {
  readonly warnings: string[] = [];
  warn(message: string): void {
    this.warnings.push(message);
  }
}

export class FakeClock {
  constructor(public time = 1_000_000) {}
  now(): number {
    return this.time;
  }
  advance(ms: number): void {
    this.time += ms;
  }
}

/** A fresh temp directory and its cleanup. */
export async function tempDir(): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'kiln-blobstore-'));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}
