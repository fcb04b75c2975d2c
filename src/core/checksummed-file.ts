import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';

/**
 * Cache files that are never half-read: `magic` names the format, a CRC-32 covers the content, and a
 * write replaces the file atomically (temporary file, then rename), so concurrent writers never mix
 * and the last one wins. A missing, foreign, torn or bit-rotten file reads as undefined: a cold cache.
 */

export function writeChecksummedFile(path: string, magic: string, parts: readonly Uint8Array[]): void {
  const head = Buffer.from(magic, 'latin1');
  let crc = 0;
  for (const p of parts) crc = crc32(p, crc);
  const sum = Buffer.alloc(4);
  sum.writeUInt32LE(crc >>> 0);
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, Buffer.concat([head, sum, ...parts]));
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** The content written with `magic`, or undefined. */
export function readChecksummedFile(path: string, magic: string): Buffer | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return undefined;
  }
  const head = Buffer.from(magic, 'latin1');
  const start = head.length + 4;
  if (bytes.length < start || !bytes.subarray(0, head.length).equals(head)) return undefined;
  const content = bytes.subarray(start);
  return crc32(content) >>> 0 === bytes.readUInt32LE(head.length) ? content : undefined;
}
