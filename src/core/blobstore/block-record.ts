import { crc32 } from 'node:zlib';

/**
 * The on-disk record of the block store: `header | data | trailer`.
 *
 * header (64 bytes): magic u32 · kind u8 (blob or tombstone) · 3 zero bytes · data size u64 ·
 *   key (32 raw bytes of the SHA-256 hash) · 12 zero bytes · CRC-32 of the 60 bytes before it.
 * trailer (8 bytes): CRC-32 of the data · commit magic u32.
 *
 * The header is written when the record's space is taken, the trailer only once every data byte is
 * written, so a record whose trailer does not check out (a crash mid-write, an abandoned upload, a
 * torn page) is skipped on start, and one whose header does not check out ends the block there.
 * All integers are little-endian.
 */
export const HEADER_BYTES = 64;
export const TRAILER_BYTES = 8;
const HEADER_MAGIC = 0x4b424c4b; // "KBLK"
const COMMIT_MAGIC = 0x444f4e45; // "DONE"
const HEADER_CRC_OFFSET = 60;
/** The magic as it appears on disk: where a scan looks for the next header after a damaged stretch. */
export const HEADER_MAGIC_BYTES: Buffer = (() => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(HEADER_MAGIC, 0);
  return b;
})();

export type RecordKind = 'blob' | 'tombstone';
const KIND_CODES: Record<RecordKind, number> = { blob: 1, tombstone: 2 };

export interface RecordHeader {
  readonly kind: RecordKind;
  /** 64 lower-case hex digits. */
  readonly hash: string;
  readonly sizeBytes: number;
}

/** Bytes a record with `sizeBytes` of data occupies in a block. */
export function recordBytes(sizeBytes: number): number {
  return HEADER_BYTES + sizeBytes + TRAILER_BYTES;
}

export function encodeHeader(header: RecordHeader): Buffer {
  return encodeHeaderInto(Buffer.allocUnsafe(HEADER_BYTES), 0, header);
}

/** Writes a header into `buf` at `offset` (a record being assembled in place); returns `buf`. */
export function encodeHeaderInto(buf: Buffer, offset: number, header: RecordHeader): Buffer {
  buf.writeUInt32LE(HEADER_MAGIC, offset);
  buf.writeUInt32LE(KIND_CODES[header.kind], offset + 4); // the kind byte and 3 zero bytes
  buf.writeBigUInt64LE(BigInt(header.sizeBytes), offset + 8);
  buf.write(header.hash, offset + 16, 32, 'hex');
  buf.fill(0, offset + 48, offset + HEADER_CRC_OFFSET);
  buf.writeUInt32LE(crc32(buf.subarray(offset, offset + HEADER_CRC_OFFSET)), offset + HEADER_CRC_OFFSET);
  return buf;
}

/** The header in `buf` (at least HEADER_BYTES long), or undefined when it is not a whole, intact header. */
export function decodeHeader(buf: Buffer): RecordHeader | undefined {
  if (buf.length < HEADER_BYTES || buf.readUInt32LE(0) !== HEADER_MAGIC) return undefined;
  if (crc32(buf.subarray(0, HEADER_CRC_OFFSET)) !== buf.readUInt32LE(HEADER_CRC_OFFSET)) return undefined;
  const code = buf.readUInt8(4);
  const kind = code === KIND_CODES.blob ? 'blob' : code === KIND_CODES.tombstone ? 'tombstone' : undefined;
  const size = buf.readBigUInt64LE(8);
  if (!kind || size > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
  return { kind, hash: buf.toString('hex', 16, 48), sizeBytes: Number(size) };
}

export function encodeTrailer(dataCrc: number): Buffer {
  return encodeTrailerInto(Buffer.allocUnsafe(TRAILER_BYTES), 0, dataCrc);
}

export function encodeTrailerInto(buf: Buffer, offset: number, dataCrc: number): Buffer {
  buf.writeUInt32LE(dataCrc, offset);
  buf.writeUInt32LE(COMMIT_MAGIC, offset + 4);
  return buf;
}

/** Whether `trailer` commits data whose CRC-32 is `dataCrc`. */
export function trailerCommits(trailer: Buffer, dataCrc: number): boolean {
  return trailer.length === TRAILER_BYTES && trailer.readUInt32LE(4) === COMMIT_MAGIC && trailer.readUInt32LE(0) === dataCrc;
}

/** CRC-32 of `data`, continuing from `previous` (zlib's, so chunks can be fed one at a time). */
export function dataCrc(data: Uint8Array, previous = 0): number {
  return crc32(data, previous);
}
