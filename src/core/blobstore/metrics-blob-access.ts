import type { Digest } from '../digest/digest.js';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { DURATION_BUCKETS, familiesOf, secondsSince } from '../metrics/metric-families.js';
import { googleRpc } from '../proto.js';
import { grpcStatusOf } from '../status-error.js';
import type { BlobAccess, BlobRead, BlobWriter, ReadRange } from './blob-access.js';

/** `cas` or `ac`: which keyspace a store serves (Buildbarn's `storage_type`). */
export type StorageLabel = 'cas' | 'ac';

/** A store that knows how much it holds (memory, disk, blocks). */
interface SizedStore {
  readonly usage: { blobs: number; bytes: number };
}

/** The blob store families of one registry (Buildbarn's `blobstore_*`, prefixed `kiln_`). */
export class BlobAccessMetrics {
  readonly duration: Histogram<'backend' | 'operation' | 'storage' | 'grpc_code'>;
  readonly bytesRead: Counter<'backend' | 'storage'>;
  readonly bytesWritten: Counter<'backend' | 'storage'>;
  readonly lookups: Counter<'backend' | 'storage' | 'result'>;
  readonly evictions: Counter<'backend' | 'storage'>;
  readonly evictedBytes: Counter<'backend' | 'storage'>;
  private readonly sized = new Set<{ store: SizedStore; backend: string; storage: StorageLabel }>();

  private constructor(registry: Registry) {
    const registers = [registry];
    this.duration = new Histogram({
      name: 'kiln_blobstore_operations_duration_seconds',
      help: 'Time of blob store operations, per layer of each store stack (backend = the layer kind; "instance" is the whole stack as the services see it).',
      labelNames: ['backend', 'operation', 'storage', 'grpc_code'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.bytesRead = new Counter({
      name: 'kiln_blobstore_read_bytes_total',
      help: 'Blob bytes read from a store layer (get, and read streams as they are consumed).',
      labelNames: ['backend', 'storage'],
      registers,
    });
    this.bytesWritten = new Counter({
      name: 'kiln_blobstore_written_bytes_total',
      help: 'Blob bytes written to a store layer (put, and committed uploads).',
      labelNames: ['backend', 'storage'],
      registers,
    });
    this.lookups = new Counter({
      name: 'kiln_blobstore_lookups_total',
      help: 'Blobs looked up (get, read, each digest of find_missing) by result: hit or miss. At backend="instance", the CAS and action cache hits and misses clients see.',
      labelNames: ['backend', 'storage', 'result'],
      registers,
    });
    this.evictions = new Counter({
      name: 'kiln_blobstore_evictions_total',
      help: 'Blobs a bounded store deleted to stay within its byte budget.',
      labelNames: ['backend', 'storage'],
      registers,
    });
    this.evictedBytes = new Counter({
      name: 'kiln_blobstore_evicted_bytes_total',
      help: 'Bytes (as charged against the budget) a bounded store freed by eviction.',
      labelNames: ['backend', 'storage'],
      registers,
    });
    const sized = this.sized;
    const sum = (pick: (usage: { blobs: number; bytes: number }) => number) =>
      function (this: Gauge<'backend' | 'storage'>) {
        this.reset();
        for (const s of sized) this.inc({ backend: s.backend, storage: s.storage }, pick(s.store.usage));
      };
    new Gauge({
      name: 'kiln_blobstore_stored_bytes',
      help: 'Bytes a bounded store holds, as charged against its budget.',
      labelNames: ['backend', 'storage'],
      registers,
      collect: sum((u) => u.bytes),
    });
    new Gauge({
      name: 'kiln_blobstore_stored_blobs',
      help: 'Blobs a bounded store holds.',
      labelNames: ['backend', 'storage'],
      registers,
      collect: sum((u) => u.blobs),
    });
  }

  static of(registry: Registry): BlobAccessMetrics {
    return familiesOf(registry, 'blobstore', (r) => new BlobAccessMetrics(r));
  }

  /** Reports the size of `store` from now on (until the returned function is called). */
  watchSize(store: BlobAccess, backend: string, storage: StorageLabel): () => void {
    if (!('usage' in store)) return () => {};
    const entry = { store: store as unknown as SizedStore, backend, storage };
    this.sized.add(entry);
    return () => this.sized.delete(entry);
  }
}

/** A gRPC code as Prometheus label value: `OK`, `NOT_FOUND`, ... */
export function grpcCodeLabel(e: unknown): string {
  return e === undefined ? 'OK' : (googleRpc.Code[grpcStatusOf(e).code] ?? 'UNKNOWN');
}

/**
 * Decorator that measures a layer of a store stack (Buildbarn's MetricsBlobAccess): the duration of
 * each operation by gRPC code, bytes read and written, and lookups by hit or miss. `createBlobAccess`
 * puts one around every layer it builds when given metrics; the server puts one around each whole
 * stack with backend `instance`.
 */
export class MetricsBlobAccess implements BlobAccess {
  private readonly labels: { backend: string; storage: StorageLabel };

  constructor(
    private readonly backend: BlobAccess,
    private readonly metrics: BlobAccessMetrics,
    backendLabel: string,
    storage: StorageLabel,
  ) {
    this.labels = { backend: backendLabel, storage };
  }

  async get(digest: Digest): Promise<Buffer> {
    const data = await this.measure('get', () => this.backend.get(digest), true);
    this.metrics.bytesRead.inc(this.labels, data.length);
    return data;
  }

  async read(digest: Digest, range?: ReadRange): Promise<BlobRead> {
    const read = await this.measure('read', () => this.backend.read(digest, range), true);
    const { bytesRead } = this.metrics;
    const labels = this.labels;
    return {
      sizeBytes: read.sizeBytes,
      chunks: (async function* () {
        for await (const chunk of read.chunks) {
          bytesRead.inc(labels, chunk.length);
          yield chunk;
        }
      })(),
    };
  }

  async put(digest: Digest, data: Buffer): Promise<void> {
    await this.measure('put', () => this.backend.put(digest, data));
    this.metrics.bytesWritten.inc(this.labels, data.length);
  }

  async beginWrite(digest: Digest): Promise<BlobWriter> {
    const writer = await this.measure('begin_write', () => this.backend.beginWrite(digest));
    const metrics = this.metrics;
    const labels = this.labels;
    const measure = this.measure.bind(this);
    return {
      get writtenBytes() {
        return writer.writtenBytes;
      },
      write: (chunk) => writer.write(chunk),
      commit: async () => {
        await measure('commit', () => writer.commit());
        metrics.bytesWritten.inc(labels, writer.writtenBytes);
      },
      abort: () => writer.abort(),
    };
  }

  async findMissing(digests: readonly Digest[]): Promise<Digest[]> {
    const missing = await this.measure('find_missing', () => this.backend.findMissing(digests));
    if (missing.length > 0) this.metrics.lookups.inc({ ...this.labels, result: 'miss' }, missing.length);
    if (digests.length > missing.length) this.metrics.lookups.inc({ ...this.labels, result: 'hit' }, digests.length - missing.length);
    return missing;
  }

  delete(digest: Digest): Promise<void> {
    return this.measure('delete', () => this.backend.delete(digest));
  }

  private async measure<T>(operation: string, run: () => Promise<T>, lookup = false): Promise<T> {
    const start = process.hrtime.bigint();
    try {
      const value = await run();
      this.metrics.duration.observe({ ...this.labels, operation, grpc_code: 'OK' }, secondsSince(start));
      if (lookup) this.metrics.lookups.inc({ ...this.labels, result: 'hit' });
      return value;
    } catch (e) {
      const code = grpcCodeLabel(e);
      this.metrics.duration.observe({ ...this.labels, operation, grpc_code: code }, secondsSince(start));
      if (lookup && code === 'NOT_FOUND') this.metrics.lookups.inc({ ...this.labels, result: 'miss' });
      throw e;
    }
  }
}
