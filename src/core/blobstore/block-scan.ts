import { open, readdir, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { BlobAccessLogger } from './blob-access.js';
import { BLOCK_FILE_NAME, newBlock, type Block } from './block-file.js';
import { dataCrc, decodeHeader, HEADER_BYTES, HEADER_MAGIC_BYTES, recordBytes, TRAILER_BYTES, trailerCommits, type RecordHeader } from './block-record.js';

/** Reading a block on start, this many bytes at a time. */
const SCAN_BUFFER_BYTES = 4 * 1024 * 1024;

/** A committed record found by the scan: its header and where its data is. */
interface ScannedRecord {
  readonly header: RecordHeader;
  readonly block: Block;
  readonly dataOffset: number;
  readonly crc: number;
}

/**
 * The restart scan: removes everything in `dir` that is not a block file, then reads every block in
 * sequence order and reports each committed record (header and data CRC-32s check out, trailer
 * written) to `onRecord`, oldest first, so that a later record of a key replaces an earlier one.
 * A damaged stretch inside a block is stepped over to the next intact header; a torn tail is
 * truncated. Returns the blocks, oldest first, each with its intact size.
 */
export async function scanBlockDirectory(dir: string, logger: BlobAccessLogger | undefined, onRecord: (record: ScannedRecord) => void): Promise<Block[]> {
  const seqs: number[] = [];
  for (const name of await readdir(dir)) {
    const m = BLOCK_FILE_NAME.exec(name);
    if (m) {
      seqs.push(Number(m[1]));
    } else {
      logger?.warn(`block store: removing ${join(dir, name)}, which is not a block file`);
      await rm(join(dir, name), { recursive: true, force: true });
    }
  }
  seqs.sort((a, b) => a - b);
  const blocks: Block[] = [];
  for (const seq of seqs) {
    const block = newBlock(dir, seq, 'r+');
    blocks.push(block);
    const file = await open(block.path, 'r+');
    try {
      block.size = await scanBlock(block, file, logger, onRecord);
    } finally {
      await file.close();
    }
  }
  return blocks;
}

/**
 * Reports the committed records of a block; returns where its intact records end (truncating the rest).
 * A damaged stretch in the middle (a write that never reached the disk while a later one did: writes
 * of one block run concurrently) is stepped over to the next intact header.
 */
async function scanBlock(block: Block, file: FileHandle, logger: BlobAccessLogger | undefined, onRecord: (record: ScannedRecord) => void): Promise<number> {
  const { size: fileSize } = await file.stat();
  const reader = new SequentialReader(file, fileSize);
  let pos = 0;
  let end = 0;
  while (pos + HEADER_BYTES <= fileSize) {
    const header = decodeHeader(await reader.bytes(pos, HEADER_BYTES));
    if (!header || pos + recordBytes(header.sizeBytes) > fileSize) {
      const next = await nextHeader(reader, pos + 1, fileSize);
      if (next === undefined) break;
      logger?.warn(`block store: ${block.path}: bytes ${pos}..${next} are not an intact record; skipped`);
      pos = next;
      continue;
    }
    let crc = 0;
    const dataOffset = pos + HEADER_BYTES;
    for (let at = 0; at < header.sizeBytes; ) {
      const piece = await reader.bytes(dataOffset + at, Math.min(SCAN_BUFFER_BYTES, header.sizeBytes - at));
      crc = dataCrc(piece, crc);
      at += piece.length;
    }
    const trailer = await reader.bytes(dataOffset + header.sizeBytes, TRAILER_BYTES);
    if (trailerCommits(trailer, crc)) onRecord({ header, block, dataOffset, crc });
    pos += recordBytes(header.sizeBytes);
    end = pos;
  }
  if (end < fileSize) {
    logger?.warn(`block store: ${block.path}: ${fileSize - end} bytes after offset ${end} are not intact records; truncated`);
    await file.truncate(end);
  }
  return end;
}

/** The offset of the first intact header (one that fits in the file) at or after `from`. */
async function nextHeader(reader: SequentialReader, from: number, fileSize: number): Promise<number | undefined> {
  for (let windowStart = from; windowStart + HEADER_BYTES <= fileSize; ) {
    const window = await reader.bytes(windowStart, Math.min(SCAN_BUFFER_BYTES, fileSize - windowStart));
    for (let at = window.indexOf(HEADER_MAGIC_BYTES); at >= 0; at = window.indexOf(HEADER_MAGIC_BYTES, at + 1)) {
      const candidate = windowStart + at;
      if (candidate + HEADER_BYTES > fileSize) return undefined;
      // (A refill gives the reader a new buffer, so `window` stays valid.)
      const header = decodeHeader(await reader.bytes(candidate, HEADER_BYTES));
      if (header && candidate + recordBytes(header.sizeBytes) <= fileSize) return candidate;
    }
    if (windowStart + window.length >= fileSize) return undefined;
    windowStart += window.length - HEADER_BYTES; // overlap, so that a header across windows is found
  }
  return undefined;
}

/** Reads a file front to back through one large buffer (scanning a block is mostly sequential). */
class SequentialReader {
  private buffer = Buffer.alloc(0);
  private bufferStart = 0;

  constructor(
    private readonly file: FileHandle,
    private readonly fileSize: number,
  ) {}

  /** `length` bytes at `position` (fewer at the end of the file); valid until the next call. */
  async bytes(position: number, length: number): Promise<Buffer> {
    const end = position + length;
    if (position < this.bufferStart || end > this.bufferStart + this.buffer.length) {
      const want = Math.min(Math.max(length, SCAN_BUFFER_BYTES), this.fileSize - position);
      const buffer = Buffer.allocUnsafe(Math.max(0, want));
      let filled = 0;
      while (filled < buffer.length) {
        const { bytesRead } = await this.file.read(buffer, filled, buffer.length - filled, position + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      this.buffer = buffer.subarray(0, filled);
      this.bufferStart = position;
    }
    return this.buffer.subarray(position - this.bufferStart, end - this.bufferStart);
  }
}
