import fs from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { InternalError, ResourceExhaustedError, StatusError } from '../status-error.js';

/** File systems allocate whole 4 KiB blocks, plus an inode and directory entry per file. */
const FS_BLOCK_BYTES = 4096;
const FILE_OVERHEAD_BYTES = 512;
/** Block files are named by their sequence number, which orders them oldest first. */
export const BLOCK_FILE_NAME = /^(\d{10})\.blk$/;

/** What the block store needs of a block's file. */
interface BlockFile {
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  write(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesWritten: number }>;
  writev(buffers: Buffer[], position: number): Promise<{ bytesWritten: number }>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

/** One block file: records appended, never rewritten, deleted as a whole. */
export interface Block {
  readonly seq: number;
  readonly path: string;
  readonly file: BlockFile;
  /** End of the last allocated record: the file's logical size. */
  size: number;
  /** Keys whose current record lives in this block. */
  readonly keys: Set<string>;
  /** Write batches and uploads in flight into this block; it is not evicted while any run. */
  writers: number;
  /** Reads in progress; the file is closed when they are done, after eviction. */
  readers: number;
  evicted: boolean;
  /** Its pinned blobs are being copied forward; it is deleted once they are. */
  rescuing: boolean;
}

/** Where the current record of a key is: the block store's index entry. */
export interface BlockEntry {
  readonly block: Block;
  /** Position of the data (after the header) in the block file. */
  readonly dataOffset: number;
  readonly sizeBytes: number;
  readonly crc: number;
}

/**
 * A block in `dir` with sequence number `seq`, its file opened on first use.
 * @param flags `w+` for a new block, `r+` for one found on start
 * @param syncDirectory fsync the directory once a new block's file exists
 */
export function newBlock(dir: string, seq: number, flags: 'w+' | 'r+', syncDirectory = false): Block {
  const path = join(dir, `${String(seq).padStart(10, '0')}.blk`);
  return {
    seq,
    path,
    file: new BlockFileDescriptor(path, flags, syncDirectory),
    size: 0,
    keys: new Set(),
    writers: 0,
    readers: 0,
    evicted: false,
    rescuing: false,
  };
}

/** Whether `a` was allocated after `b`. */
export function later(a: BlockEntry, b: BlockEntry): boolean {
  return a.block.seq !== b.block.seq ? a.block.seq > b.block.seq : a.dataOffset > b.dataOffset;
}

/** Bytes a block file of `size` bytes costs on disk. */
export function charge(size: number): number {
  return Math.ceil(size / FS_BLOCK_BYTES) * FS_BLOCK_BYTES + FILE_OVERHEAD_BYTES;
}

/** Fills `buffer` from `block`'s file at `position`; a short file means the index is wrong. */
export async function readFully(block: Block, buffer: Buffer, position: number): Promise<Buffer> {
  let filled = 0;
  while (filled < buffer.length) {
    const { bytesRead } = await block.file.read(buffer, filled, buffer.length - filled, position + filled);
    if (bytesRead === 0) throw new InternalError(`block file ${block.path} is shorter than its index says`);
    filled += bytesRead;
  }
  return buffer;
}

/** Writes `buffers` back to back at `position`, finishing partial writes. */
export async function writeAll(file: BlockFile, buffers: Buffer[], position: number): Promise<void> {
  let { bytesWritten } = await file.writev(buffers, position);
  const total = buffers.reduce((n, b) => n + b.length, 0);
  if (bytesWritten === total) return;
  const rest = Buffer.concat(buffers).subarray(bytesWritten);
  let done = 0;
  while (done < rest.length) {
    ({ bytesWritten } = await file.write(rest, done, rest.length - done, position + total - rest.length + done));
    done += bytesWritten;
  }
}

/** Disk full is RESOURCE_EXHAUSTED (a client may retry later); other I/O failures are INTERNAL. */
export function storageError(e: unknown, doing: string): Error {
  if (e instanceof StatusError) return e;
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const message = `${doing}: ${e instanceof Error ? e.message : String(e)}`;
  if (code === 'ENOSPC' || code === 'EDQUOT') return new ResourceExhaustedError(message);
  return new InternalError(message);
}

/**
 * A block's file, opened on first use: blocks are allocated synchronously (so that space is handed out
 * in order), but opening a file is asynchronous. It uses fs's callback API on a raw descriptor, which
 * costs a third of FileHandle's promise API per call (bench/cas: small blob reads).
 */
class BlockFileDescriptor implements BlockFile {
  private fd: Promise<number> | undefined;
  private closed = false;

  /**
   * @param flags `w+` for a new block, `r+` for one found on start
   * @param syncDirectory fsync the directory once a new block exists, so that the file survives power loss
   */
  constructor(
    private readonly path: string,
    private readonly flags: 'w+' | 'r+',
    private readonly syncDirectory = false,
  ) {}

  private descriptor(): Promise<number> {
    if (this.closed) return Promise.reject(new InternalError(`block file ${this.path} is closed`));
    this.fd ??= this.openFile();
    return this.fd;
  }

  private async openFile(): Promise<number> {
    const fd = await new Promise<number>((resolve, reject) => fs.open(this.path, this.flags, (e, fd) => (e ? reject(e) : resolve(fd))));
    if (this.syncDirectory) {
      const dir = await open(dirname(this.path), 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    }
    return fd;
  }

  async read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }> {
    const fd = await this.descriptor();
    return new Promise((resolve, reject) => fs.read(fd, buffer, offset, length, position, (e, bytesRead) => (e ? reject(e) : resolve({ bytesRead }))));
  }

  async write(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesWritten: number }> {
    const fd = await this.descriptor();
    return new Promise((resolve, reject) => fs.write(fd, buffer, offset, length, position, (e, bytesWritten) => (e ? reject(e) : resolve({ bytesWritten }))));
  }

  async writev(buffers: Buffer[], position: number): Promise<{ bytesWritten: number }> {
    const fd = await this.descriptor();
    return new Promise((resolve, reject) => fs.writev(fd, buffers, position, (e, bytesWritten) => (e ? reject(e) : resolve({ bytesWritten }))));
  }

  async sync(): Promise<void> {
    const fd = await this.descriptor();
    await new Promise<void>((resolve, reject) => fs.fsync(fd, (e) => (e ? reject(e) : resolve())));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (!this.fd) return;
    const fd = await this.fd;
    await new Promise<void>((resolve, reject) => fs.close(fd, (e) => (e ? reject(e) : resolve())));
  }
}
