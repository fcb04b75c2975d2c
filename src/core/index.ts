export { type Position, position, formatPosition } from './position.js';
export { KilnError, UsageError, isKilnError } from './errors.js';
export { codeStamp } from './code-stamp.js';
export { nodeCrypto } from './node-crypto.js';
export { isProcessAlive } from './process-alive.js';
export { ByteWriter, ByteReader, ByteFormatError } from './byte-codec.js';
export { writeChecksummedFile, readChecksummedFile } from './checksummed-file.js';
export { shellQuote } from './shell-quote.js';
export { ExitCode } from './exit-codes.js';
export * from './proto.js';
export { protoJson, protoText } from './proto-formats.js';
export { durationFromMs, timestampFromMs, msFromDuration, msFromTimestamp } from './proto-time.js';
export { type Clock, systemClock } from './clock.js';
export { type FileStamp, RACY_WINDOW_MS, fileStampOf, sameFileStamp, isRacilyStamped, writeFileStamp, readFileStamp } from './file-stamp.js';
export {
  ConfigError,
  throwConfigError,
  inConfigFile,
  parseConfigText,
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
  PassedOnStatusError,
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
export { ZstdCompressor, ZstdDecompressor, zstdCompress, zstdDecompressBounded } from './zstd-stream.js';
export { readTextUpTo } from './bounded-read.js';
export { delimitedMessages, delimitedRecord } from './delimited-messages.js';
