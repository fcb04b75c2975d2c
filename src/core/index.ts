export { type Position, position, formatPosition } from './position.js';
export { KilnError, UsageError, isKilnError } from './errors.js';
export { codeStamp } from './code-stamp.js';
export { isProcessAlive } from './process-alive.js';
export { ByteWriter, ByteReader, ByteFormatError } from './byte-codec.js';
export { writeChecksummedFile, readChecksummedFile } from './checksummed-file.js';
export { shellQuote } from './shell-quote.js';
export { ExitCode } from './exit-codes.js';
export * from './proto.js';
export { durationFromMs, timestampFromMs, msFromDuration, msFromTimestamp } from './proto-time.js';
export { type Clock, systemClock } from './clock.js';
export { type FileStamp, RACY_WINDOW_NS, fileStampOf, sameFileStamp, isRacilyStamped } from './file-stamp.js';
export {
  ConfigError,
  throwConfigError,
  fieldPath,
  readObject,
  readInteger,
  readPositiveInteger,
  readNonNegativeInteger,
  readString,
  readNonEmptyString,
  readBoolean,
  readOneOf,
  type ConfigFail,
} from './json-config.js';
export {
  StatusError,
  InvalidArgumentError,
  NotFoundError,
  ResourceExhaustedError,
  FailedPreconditionError,
  OutOfRangeError,
  UnavailableError,
  InternalError,
  isStatusError,
  grpcStatusOf,
  type PreconditionViolation,
} from './status-error.js';
export {
  type Digest,
  type DigestLike,
  EMPTY_DIGEST,
  SHA256_HEX_LENGTH,
  parseDigest,
  parseDigestParts,
  parseDigestKey,
  digestKey,
  digestEquals,
  isEmptyDigest,
} from './digest/digest.js';
export {
  digestOf,
  digestOfStream,
  digestOfFile,
  digestOfMessage,
  encodeMessage,
  encodedBytes,
  DigestHasher,
  type EncodedMessage,
} from './digest/sha256.js';
export {
  encodeAction,
  encodeCommand,
  encodeDirectory,
  encodeRequestMetadata,
  type DirectoryFields,
  type PlatformFields,
} from './digest/reapi-encoders.js';
export {
  type BlobAccess,
  type BlobRead,
  type BlobWriter,
  type ReadRange,
  type BlobAccessLogger,
  DEFAULT_CHUNK_SIZE_BYTES,
} from './blobstore/blob-access.js';
export { resolveRange, bufferRead, type ResolvedRange } from './blobstore/read-range.js';
export { MemoryBlobAccess, type MemoryBlobAccessOptions } from './blobstore/memory-blob-access.js';
export { DiskBlobAccess, diskUsageOf, type DiskBlobAccessOptions } from './blobstore/disk-blob-access.js';
export { BlockBlobAccess, type BlockBlobAccessOptions } from './blobstore/block-blob-access.js';
export { VerifyingBlobAccess, type VerifyingBlobAccessOptions } from './blobstore/verifying-blob-access.js';
export { ExistenceCachingBlobAccess, type ExistenceCachingBlobAccessOptions } from './blobstore/existence-caching-blob-access.js';
export {
  CompletenessCheckingBlobAccess,
  findMissingReferencedBlobs,
  type CompletenessCheckingBlobAccessOptions,
} from './blobstore/completeness-checking-blob-access.js';
export { ChecksummingBlobAccess, type ChecksummingBlobAccessOptions } from './blobstore/checksumming-blob-access.js';
export {
  type BlobAccessConfig,
  type MemoryBlobAccessConfig,
  type DiskBlobAccessConfig,
  type BlockBlobAccessConfig,
  type VerifyingBlobAccessConfig,
  type ExistenceCachingBlobAccessConfig,
  type CompletenessCheckingBlobAccessConfig,
  type ChecksummingBlobAccessConfig,
  BlobAccessConfigError,
  parseBlobAccessConfig,
} from './blobstore/blob-access-config.js';
export { createBlobAccess, type BlobAccessDeps } from './blobstore/create-blob-access.js';
export * from './sandbox/index.js';
export { ZstdCompressor, ZstdDecompressor, zstdCompress, zstdDecompressBounded } from './zstd-stream.js';
