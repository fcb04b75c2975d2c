import { digestKey, googleRpc, StatusError, systemClock, type Clock, type Digest } from '../src/core/index.js';
import type { BlobAccess, BlobWriter } from '../src/core/blobstore/index.js';

/** Another stream took over this upload (a client resumed it); the old stream must stop. */
export class AbortedError extends StatusError {
  readonly code = googleRpc.Code.ABORTED;
}

/**
 * One resumable ByteStream upload: the blob writer and how many bytes it has accepted. It outlives a
 * broken stream, so the client can ask QueryWriteStatus for the committed offset and continue from it.
 * Operations run one after another (`run`), and only the stream that owns the session may write.
 */
export class UploadSession {
  /** Uncompressed bytes accepted by the writer: the committed offset. */
  committedBytes = 0;
  lastActiveMs: number;
  private owner: symbol | undefined;
  private tail: Promise<unknown> = Promise.resolve();
  private writer: BlobWriter | undefined;

  constructor(
    readonly key: string,
    readonly digest: Digest,
    private readonly cas: BlobAccess,
    nowMs: number,
  ) {
    this.lastActiveMs = nowMs;
  }

  /** Whether a stream is writing to this session now. */
  get owned(): boolean {
    return this.owner !== undefined;
  }

  /** Makes `stream` the owner; a previous owner's later operations fail with ABORTED. */
  takeOver(stream: symbol): void {
    this.owner = stream;
  }

  /** The owner's stream ended (broken or finished); the state stays for a resume. */
  release(stream: symbol): void {
    if (this.owner === stream) this.owner = undefined;
  }

  /** Runs `op` after every earlier operation, as long as `stream` still owns the session. */
  run<T>(stream: symbol, nowMs: number, op: () => Promise<T>): Promise<T> {
    const result = this.tail.then(async () => {
      if (this.owner !== stream) throw new AbortedError(`upload ${digestKey(this.digest)} was taken over by another stream`);
      this.lastActiveMs = nowMs;
      return op();
    });
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Resolves when every operation queued so far has finished (so committedBytes is final for them). */
  settled(): Promise<void> {
    return this.tail.then(() => undefined);
  }

  /** Starts over from byte 0 (a client that writes at offset 0 again). */
  async restart(): Promise<void> {
    await this.writer?.abort();
    this.writer = undefined;
    this.committedBytes = 0;
  }

  async write(chunk: Uint8Array): Promise<void> {
    this.writer ??= await this.cas.beginWrite(this.digest);
    await this.writer.write(chunk);
    this.committedBytes += chunk.byteLength;
  }

  /** Verifies and stores the blob (the CAS's verifying layer rejects a wrong size or hash). */
  async commit(): Promise<void> {
    this.writer ??= await this.cas.beginWrite(this.digest);
    const writer = this.writer;
    this.writer = undefined;
    await writer.commit();
  }

  async discard(): Promise<void> {
    const writer = this.writer;
    this.writer = undefined;
    this.committedBytes = 0;
    await writer?.abort();
  }
}

/**
 * The uploads in progress, by upload key. Idle ones are discarded after a timeout, and at most
 * `maxSessions` are kept: beyond that the longest-idle session nobody is writing to goes first, so
 * abandoned uploads cannot pile up open files.
 */
export class UploadSessions {
  private readonly sessions = new Map<string, UploadSession>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly idleTimeoutMs: number,
    /** Idle times are measured with it (the byte-stream service stamps activity with it too). */
    readonly clock: Clock = systemClock,
    private readonly maxSessions = 1000,
  ) {
    this.sweeper = setInterval(() => void this.sweep(), Math.max(1000, Math.min(60_000, idleTimeoutMs / 2)));
    this.sweeper.unref();
  }

  get(key: string): UploadSession | undefined {
    return this.sessions.get(key);
  }

  open(key: string, digest: Digest, cas: BlobAccess): UploadSession {
    let session = this.sessions.get(key);
    if (!session) {
      this.makeRoom();
      session = new UploadSession(key, digest, cas, this.clock.now());
      this.sessions.set(key, session);
    }
    return session;
  }

  /** Forgets a finished or failed upload and releases its writer. */
  async close(session: UploadSession): Promise<void> {
    if (this.sessions.get(session.key) === session) this.sessions.delete(session.key);
    await session.discard();
  }

  private makeRoom(): void {
    if (this.sessions.size < this.maxSessions) return;
    let oldest: UploadSession | undefined;
    for (const s of this.sessions.values()) {
      if (!s.owned && (!oldest || s.lastActiveMs < oldest.lastActiveMs)) oldest = s;
    }
    if (oldest) void this.close(oldest);
  }

  /** Discards uploads that nobody has written to for the idle timeout. */
  async sweep(): Promise<void> {
    const cutoff = this.clock.now() - this.idleTimeoutMs;
    for (const session of [...this.sessions.values()]) {
      if (!session.owned && session.lastActiveMs < cutoff) await this.close(session);
    }
  }

  /** Discards every upload (server shutdown). */
  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.values()].map((s) => this.close(s)));
  }
}
