import { systemClock, type Clock } from '../clock.js';
import type { BlobAccess, BlobAccessLogger } from './blob-access.js';
import { BlobAccessConfigError, parseBlobAccessConfig, type BlobAccessConfig, type GrpcBlobAccessConfig } from './blob-access-config.js';
import { BlockBlobAccess } from './block-blob-access.js';
import { ChecksummingBlobAccess } from './checksumming-blob-access.js';
import { CompletenessCheckingBlobAccess } from './completeness-checking-blob-access.js';
import { DiskBlobAccess } from './disk-blob-access.js';
import { ExistenceCachingBlobAccess } from './existence-caching-blob-access.js';
import type { BlobPins } from './blob-pins.js';
import { MemoryBlobAccess } from './memory-blob-access.js';
import { MetricsBlobAccess, type BlobAccessMetrics, type StorageLabel } from './metrics-blob-access.js';
import { MirroredBlobAccess } from './mirrored-blob-access.js';
import { ShardingBlobAccess } from './sharding-blob-access.js';
import { VerifyingBlobAccess } from './verifying-blob-access.js';

/** What the stores need from their surroundings. */
export interface BlobAccessDeps {
  /** For existence caching; Date.now by default. */
  readonly clock?: Clock;
  /** Where corrupt blobs and cleanup failures are reported. */
  readonly logger?: BlobAccessLogger;
  /** The CAS an action cache refers to; required by `completeness-checking`. */
  readonly contentAddressableStorage?: BlobAccess;
  /**
   * Builds a `grpc` backend (src/remote's RemoteBlobAccess: core speaks no gRPC, so the server
   * passes it in). `where` is the config's field path, for errors.
   */
  readonly connectRemote?: (config: GrpcBlobAccessConfig, where: string) => Promise<BlobAccess>;
  /** Every layer built is measured (MetricsBlobAccess, backend = its kind), its size and evictions reported. */
  readonly metrics?: BlobAccessMetrics;
  /** The keyspace the stack serves, for the metrics' `storage` label; a disk or block store's own keyspace by default. */
  readonly storage?: StorageLabel;
  /** Blobs disk and block stores must not evict (BlobPins); the server pins what it told clients exist. */
  readonly pins?: BlobPins;
}

/**
 * Builds the BlobAccess a config describes, decorators around their backend. The one place that knows
 * every kind: adding a kind to BlobAccessConfig without handling it here fails to compile.
 * The config is validated first (it may come straight from a JSON file).
 * @throws BlobAccessConfigError for an invalid config or a missing dependency
 */
export async function createBlobAccess(config: BlobAccessConfig, deps: BlobAccessDeps = {}, where = 'storage'): Promise<BlobAccess> {
  const valid = parseBlobAccessConfig(config, where);
  const metrics = deps.metrics;
  if (!metrics) return build(valid, deps, where);
  const storage: StorageLabel = deps.storage ?? ('keyspace' in valid && valid.keyspace === 'ac' ? 'ac' : 'cas');
  const labels = { backend: valid.kind, storage };
  const built = await build(
    valid,
    {
      ...deps,
      storage,
      onEvict: (blobs, bytes) => {
        metrics.evictions.inc(labels, blobs);
        metrics.evictedBytes.inc(labels, bytes);
      },
    },
    where,
  );
  metrics.watchSize(built, valid.kind, storage);
  return new MetricsBlobAccess(built, metrics, valid.kind, storage);
}

/** What build passes to the bounded stores it opens. */
interface BuildDeps extends BlobAccessDeps {
  readonly onEvict?: (blobs: number, bytes: number) => void;
}

async function build(valid: BlobAccessConfig, deps: BuildDeps, where: string): Promise<BlobAccess> {
  switch (valid.kind) {
    case 'memory':
      return new MemoryBlobAccess({ maxBytes: valid.maxBytes, ...(deps.onEvict ? { onEvict: deps.onEvict } : {}) });
    case 'disk':
      return DiskBlobAccess.open({
        path: valid.path,
        maxBytes: valid.maxBytes,
        keyspace: valid.keyspace ?? 'cas',
        sync: valid.sync ?? false,
        ...(deps.logger ? { logger: deps.logger } : {}),
        ...(deps.onEvict ? { onEvict: deps.onEvict } : {}),
        ...(deps.pins ? { pins: deps.pins } : {}),
      });
    case 'blocks':
      return BlockBlobAccess.open({
        path: valid.path,
        maxBytes: valid.maxBytes,
        keyspace: valid.keyspace ?? 'cas',
        sync: valid.sync ?? false,
        ...(valid.blockSizeBytes !== undefined ? { blockSizeBytes: valid.blockSizeBytes } : {}),
        ...(deps.logger ? { logger: deps.logger } : {}),
        ...(deps.onEvict ? { onEvict: deps.onEvict } : {}),
        ...(deps.pins ? { pins: deps.pins } : {}),
      });
    case 'verifying':
      return new VerifyingBlobAccess(await createBlobAccess(valid.backend, deps, `${where}.backend`), {
        ...(valid.wholeReadLimitBytes !== undefined ? { wholeReadLimitBytes: valid.wholeReadLimitBytes } : {}),
        ...(deps.logger ? { logger: deps.logger } : {}),
      });
    case 'existence-caching':
      return new ExistenceCachingBlobAccess(await createBlobAccess(valid.backend, deps, `${where}.backend`), {
        ttlMs: valid.ttlMs,
        clock: deps.clock ?? systemClock,
        ...(valid.maxEntries !== undefined ? { maxEntries: valid.maxEntries } : {}),
      });
    case 'completeness-checking': {
      const cas = deps.contentAddressableStorage;
      if (!cas) throw new BlobAccessConfigError(`${where}: "completeness-checking" needs the CAS it checks against (deps.contentAddressableStorage)`);
      return new CompletenessCheckingBlobAccess(await createBlobAccess(valid.backend, deps, `${where}.backend`), {
        contentAddressableStorage: cas,
        ...(deps.logger ? { logger: deps.logger } : {}),
      });
    }
    case 'checksumming':
      return new ChecksummingBlobAccess(await createBlobAccess(valid.backend, deps, `${where}.backend`), deps.logger ? { logger: deps.logger } : {});
    case 'grpc': {
      if (!deps.connectRemote) throw new BlobAccessConfigError(`${where}: "grpc" storage needs a gRPC client (deps.connectRemote)`);
      return deps.connectRemote(valid, where);
    }
    case 'sharding': {
      const shards = [];
      for (const [i, s] of valid.shards.entries()) {
        shards.push({ name: s.name, weight: s.weight ?? 1, backend: await createBlobAccess(s.backend, deps, `${where}.shards[${i}].backend`) });
      }
      return new ShardingBlobAccess(shards);
    }
    case 'mirrored':
      return new MirroredBlobAccess(await createBlobAccess(valid.a, deps, `${where}.a`), await createBlobAccess(valid.b, deps, `${where}.b`), {
        ...(deps.logger ? { logger: deps.logger } : {}),
      });
    default:
      return unreachable(valid);
  }
}

function unreachable(config: never): never {
  throw new BlobAccessConfigError(`unknown storage kind ${JSON.stringify((config as { kind: unknown }).kind)}`);
}
