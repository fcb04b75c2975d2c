export {
  type BlobAccess,
  type BlobRead,
  type BlobWriter,
  type ReadRange,
  type BlobAccessLogger,
  DEFAULT_CHUNK_SIZE_BYTES,
} from './blob-access.js';
export { resolveRange, bufferRead, type ResolvedRange } from './read-range.js';
export { BufferedBlobWriter } from './buffered-blob-writer.js';
export { MemoryBlobAccess, type MemoryBlobAccessOptions } from './memory-blob-access.js';
export { DiskBlobAccess, diskUsageOf, type DiskBlobAccessOptions } from './disk-blob-access.js';
export { BlockBlobAccess, type BlockBlobAccessOptions } from './block-blob-access.js';
export { VerifyingBlobAccess, type VerifyingBlobAccessOptions } from './verifying-blob-access.js';
export { ExistenceCachingBlobAccess, type ExistenceCachingBlobAccessOptions } from './existence-caching-blob-access.js';
export {
  CompletenessCheckingBlobAccess,
  findMissingReferencedBlobs,
  type CompletenessCheckingBlobAccessOptions,
} from './completeness-checking-blob-access.js';
export { ShardingBlobAccess, type Shard } from './sharding-blob-access.js';
export { MirroredBlobAccess, type MirroredBlobAccessOptions } from './mirrored-blob-access.js';
export { RendezvousHashing, type RendezvousMember } from './rendezvous-hashing.js';
export { ChecksummingBlobAccess, type ChecksummingBlobAccessOptions } from './checksumming-blob-access.js';
export {
  type BlobAccessConfig,
  type MemoryBlobAccessConfig,
  type DiskBlobAccessConfig,
  type BlockBlobAccessConfig,
  type VerifyingBlobAccessConfig,
  type ExistenceCachingBlobAccessConfig,
  type CompletenessCheckingBlobAccessConfig,
  type ChecksummingBlobAccessConfig,
  type GrpcBlobAccessConfig,
  type ShardingBlobAccessConfig,
  type ShardConfig,
  type MirroredBlobAccessConfig,
  backendsOf,
  mapBackends,
  BlobAccessConfigError,
  parseBlobAccessConfig,
} from './blob-access-config.js';
export { createBlobAccess, type BlobAccessDeps } from './create-blob-access.js';
export { BlobAccessMetrics, MetricsBlobAccess, grpcCodeLabel, type StorageLabel } from './metrics-blob-access.js';
export { BlobPins } from './blob-pins.js';
export { PinningBlobAccess } from './pinning-blob-access.js';
