import { digestKey, type Digest } from '../digest/digest.js';
import { googleRpc } from '../proto.js';
import { InvalidArgumentError, isStatusError, NotFoundError, OutOfRangeError } from '../status-error.js';
import type { BlobAccess, BlobAccessLogger, BlobRead, BlobWriter, ReadRange } from './blob-access.js';

export interface MirroredBlobAccessOptions {
  readonly logger?: BlobAccessLogger;
  /** Repairs copy blobs up to this size whole (get, put); larger ones are streamed. Default 4 MiB. */
  readonly wholeCopyLimitBytes?: number;
}

interface Side {
  readonly name: 'a' | 'b';
  readonly backend: BlobAccess;
}

const DEFAULT_WHOLE_COPY_LIMIT = 4 * 1024 * 1024;
/** Repairs findMissing runs at once. */
const REPAIR_CONCURRENCY = 8;

/**
 * Keeps every blob on two backends, A and B (Buildbarn's MirroredBlobAccess), and repairs a copy
 * that is missing or corrupt (a verifying backend reports a corrupt blob as NOT_FOUND) whenever it
 * shows:
 * - get / read alternate between A and B; when the first has no good copy, the blob comes from the
 *   other and is copied back before it is served (a read that then fails is served from the other).
 * - put / beginWrite write to both. Unlike Buildbarn's, one side that fails (a node down or
 *   restarting) does not fail the write: the blob is on the other, and the first read or findMissing
 *   that finds it one-sided copies it over. Both failing, or either refusing the content
 *   (INVALID_ARGUMENT), fails it.
 * - findMissing asks both: missing only when missing on both. A blob on one side only is copied to
 *   the other before the answer, so what is said present can be read from either; one whose copy
 *   fails because its only copy is gone too is reported missing. With one side unreachable the other
 *   answers alone.
 * Other failures of one side (unreachable, overloaded) make reads fall back to the other as well;
 * request errors (INVALID_ARGUMENT, OUT_OF_RANGE) do not, the other would say the same.
 */
export class MirroredBlobAccess implements BlobAccess {
  private readonly a: Side;
  private readonly b: Side;
  private round = 0;
  private readonly wholeCopyLimit: number;
  /** Repairs in flight by digest key and direction, so concurrent readers of one blob copy it once. */
  private readonly repairs = new Map<string, Promise<boolean>>();

  constructor(
    a: BlobAccess,
    b: BlobAccess,
    private readonly options: MirroredBlobAccessOptions = {},
  ) {
    this.a = { name: 'a', backend: a };
    this.b = { name: 'b', backend: b };
    this.wholeCopyLimit = options.wholeCopyLimitBytes ?? DEFAULT_WHOLE_COPY_LIMIT;
  }

  /** The side to read first, alternating, and the other one. */
  private sides(): [Side, Side] {
    this.round = (this.round + 1) % 2;
    return this.round === 1 ? [this.a, this.b] : [this.b, this.a];
  }

  async get(digest: Digest): Promise<Buffer> {
    const [first, other] = this.sides();
    let firstError: unknown;
    try {
      return await first.backend.get(digest);
    } catch (e) {
      if (!fallsBack(e)) throw inSide(first, e);
      firstError = e;
    }
    let data: Buffer;
    try {
      data = await other.backend.get(digest);
    } catch (e) {
      throw bothFailed(first, firstError, other, e);
    }
    if (copyIsMissing(firstError)) {
      await this.repair(other, first, digest, () => first.backend.put(digest, data));
    }
    return data;
  }

  async read(digest: Digest, range?: ReadRange): Promise<BlobRead> {
    const [first, other] = this.sides();
    let firstError: unknown;
    try {
      return await first.backend.read(digest, range);
    } catch (e) {
      if (!fallsBack(e)) throw inSide(first, e);
      firstError = e;
    }
    if (copyIsMissing(firstError) && (await this.repair(other, first, digest, () => this.copy(other, first, digest)))) {
      try {
        return await first.backend.read(digest, range);
      } catch {
        // served from the other below
      }
    }
    try {
      return await other.backend.read(digest, range);
    } catch (e) {
      throw bothFailed(first, firstError, other, e);
    }
  }

  async put(digest: Digest, data: Buffer): Promise<void> {
    const [ra, rb] = await Promise.allSettled([this.a.backend.put(digest, data), this.b.backend.put(digest, data)]);
    this.judgeWrite(digest, ra, rb);
  }

  async beginWrite(digest: Digest): Promise<BlobWriter> {
    const [ra, rb] = await Promise.allSettled([this.a.backend.beginWrite(digest), this.b.backend.beginWrite(digest)]);
    const writers: { side: Side; writer: BlobWriter }[] = [];
    if (ra.status === 'fulfilled') writers.push({ side: this.a, writer: ra.value });
    if (rb.status === 'fulfilled') writers.push({ side: this.b, writer: rb.value });
    try {
      this.judgeWrite(digest, ra, rb);
    } catch (e) {
      await Promise.allSettled(writers.map((w) => w.writer.abort()));
      throw e;
    }
    return new MirroredBlobWriter(writers, (side, e) => this.warnOneSided(side, digest, e));
  }

  async findMissing(digests: readonly Digest[]): Promise<Digest[]> {
    const [ra, rb] = await Promise.allSettled([this.a.backend.findMissing(digests), this.b.backend.findMissing(digests)]);
    if (ra.status === 'rejected' && rb.status === 'rejected') throw bothFailed(this.a, ra.reason, this.b, rb.reason);
    if (ra.status === 'rejected' || rb.status === 'rejected') {
      const [down, error, answer] =
        ra.status === 'rejected' ? [this.a, ra.reason, rb as PromiseFulfilledResult<Digest[]>] : [this.b, (rb as PromiseRejectedResult).reason, ra];
      this.options.logger?.warn(`mirror ${down.name}: findMissing failed (${(error as Error).message}); answered by the other side alone`);
      return answer.value;
    }
    const missingA = new Set(ra.value.map(digestKey));
    const missingB = new Set(rb.value.map(digestKey));
    const missing: Digest[] = [];
    const oneSided: { from: Side; to: Side; digest: Digest }[] = [];
    for (const d of ra.value) {
      if (missingB.has(digestKey(d))) missing.push(d);
      else oneSided.push({ from: this.b, to: this.a, digest: d });
    }
    for (const d of rb.value) if (!missingA.has(digestKey(d))) oneSided.push({ from: this.a, to: this.b, digest: d });
    for (let i = 0; i < oneSided.length; i += REPAIR_CONCURRENCY) {
      await Promise.all(
        oneSided.slice(i, i + REPAIR_CONCURRENCY).map(async ({ from, to, digest }) => {
          try {
            await this.repairOrThrow(from, to, digest);
          } catch (e) {
            // Its only copy is gone (evicted, or found corrupt and dropped): missing after all.
            if (copyIsMissing(e)) missing.push(digest);
            else this.options.logger?.warn(`mirror: could not copy ${digestKey(digest)} from ${from.name} to ${to.name}: ${(e as Error).message}`);
          }
        }),
      );
    }
    return missing;
  }

  async delete(digest: Digest): Promise<void> {
    const results = await Promise.allSettled([this.a.backend.delete(digest), this.b.backend.delete(digest)]);
    for (const r of results) if (r.status === 'rejected') throw r.reason;
  }

  /** Runs `copy` (from `from` to `to`) once per digest at a time; true if it succeeded, failures logged. */
  private async repair(from: Side, to: Side, digest: Digest, copy: () => Promise<void>): Promise<boolean> {
    try {
      await this.once(from, to, digest, copy);
      return true;
    } catch (e) {
      this.options.logger?.warn(`mirror: could not repair ${digestKey(digest)} on ${to.name} from ${from.name}: ${(e as Error).message}`);
      return false;
    }
  }

  private repairOrThrow(from: Side, to: Side, digest: Digest): Promise<void> {
    return this.once(from, to, digest, () => this.copy(from, to, digest));
  }

  private async once(from: Side, to: Side, digest: Digest, copy: () => Promise<void>): Promise<void> {
    const key = `${from.name}>${to.name}:${digestKey(digest)}`;
    let running = this.repairs.get(key);
    if (!running) {
      running = copy().then(() => true);
      this.repairs.set(key, running);
      void running.finally(() => this.repairs.delete(key)).catch(() => undefined);
    }
    await running;
  }

  /** Copies one blob: whole when small, streamed otherwise (never whole in memory). */
  private async copy(from: Side, to: Side, digest: Digest): Promise<void> {
    if (digest.sizeBytes <= this.wholeCopyLimit) {
      const data = await from.backend.get(digest);
      await to.backend.put(digest, data);
      return;
    }
    const source = await from.backend.read(digest);
    const writer = await to.backend.beginWrite(digest);
    try {
      for await (const chunk of source.chunks) await writer.write(chunk);
      await writer.commit();
    } catch (e) {
      await writer.abort();
      throw e;
    }
  }

  /** A write stands when one side stored it, unless the content was refused. */
  private judgeWrite(digest: Digest, ra: PromiseSettledResult<unknown>, rb: PromiseSettledResult<unknown>): void {
    if (ra.status === 'rejected' && rb.status === 'rejected') throw bothFailed(this.a, ra.reason, this.b, rb.reason);
    for (const [side, r] of [
      [this.a, ra],
      [this.b, rb],
    ] as const) {
      if (r.status !== 'rejected') continue;
      if (r.reason instanceof InvalidArgumentError) throw inSide(side, r.reason);
      this.warnOneSided(side, digest, r.reason);
    }
  }

  private warnOneSided(side: Side, digest: Digest, e: unknown): void {
    this.options.logger?.warn(
      `mirror ${side.name}: could not store ${digestKey(digest)} (${(e as Error).message}); it is on the other side and is copied back on its next read or findMissing`,
    );
  }
}

/** An upload to both sides; a side that fails is dropped (and logged), the upload goes on while one is left. */
class MirroredBlobWriter implements BlobWriter {
  private written = 0;

  constructor(
    private writers: { side: Side; writer: BlobWriter }[],
    private readonly dropped: (side: Side, e: unknown) => void,
  ) {}

  get writtenBytes(): number {
    return this.written;
  }

  async write(chunk: Uint8Array): Promise<void> {
    await this.onEach((w) => w.write(chunk));
    this.written += chunk.byteLength;
  }

  async commit(): Promise<void> {
    await this.onEach((w) => w.commit());
  }

  async abort(): Promise<void> {
    await Promise.allSettled(this.writers.map((w) => w.writer.abort()));
  }

  private async onEach(op: (writer: BlobWriter) => Promise<void>): Promise<void> {
    const results = await Promise.allSettled(this.writers.map((w) => op(w.writer)));
    const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [{ ...this.writers[i]!, error: r.reason as unknown }] : []));
    if (failed.length === 0) return;
    const refused = failed.find((f) => f.error instanceof InvalidArgumentError);
    if (failed.length === this.writers.length || refused) {
      await this.abort();
      const f = refused ?? failed[0]!;
      throw inSide(f.side, f.error);
    }
    for (const f of failed) {
      this.dropped(f.side, f.error);
      void f.writer.abort().catch(() => undefined);
    }
    this.writers = this.writers.filter((w) => !failed.some((f) => f.writer === w.writer));
  }
}

/** NOT_FOUND (missing, or corrupt and dropped by a verifying backend) or DATA_LOSS (read back wrong): that side has no good copy. */
function copyIsMissing(e: unknown): boolean {
  return e instanceof NotFoundError || (isStatusError(e) && e.code === googleRpc.Code.DATA_LOSS);
}

/** Whether the other side may serve what this one failed: anything but a bad request. */
function fallsBack(e: unknown): boolean {
  return !(e instanceof InvalidArgumentError || e instanceof OutOfRangeError);
}

function inSide(side: Side, e: unknown): unknown {
  return isStatusError(e) ? e.withContext(`mirror ${side.name}`) : e;
}

/** Both sides failed: NOT_FOUND if either said so (the client then uploads it again), else the first's error. */
function bothFailed(first: Side, firstError: unknown, other: Side, otherError: unknown): unknown {
  if (otherError instanceof NotFoundError && !(firstError instanceof NotFoundError)) return inSide(other, otherError);
  return inSide(first, firstError);
}
