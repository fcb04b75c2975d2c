import { ConfigError, fieldPath, readBoolean, readNonEmptyString, readObject, readOneOf, readPositiveInteger, type ConfigFail } from '../json-config.js';

/**
 * How to build a BlobAccess: a backend, possibly wrapped in decorators, as nested objects (the shape of
 * a storage section in a JSON config file). Built by `createBlobAccess`.
 *
 * A typical CAS: `{ kind: 'existence-caching', ttlMs: 60000, backend: { kind: 'verifying', backend: { kind: 'disk', path, maxBytes } } }`.
 * A typical action cache: `{ kind: 'completeness-checking', backend: { kind: 'disk', path, maxBytes, keyspace: 'ac' } }`.
 */
export type BlobAccessConfig =
  | MemoryBlobAccessConfig
  | DiskBlobAccessConfig
  | BlockBlobAccessConfig
  | VerifyingBlobAccessConfig
  | ExistenceCachingBlobAccessConfig
  | CompletenessCheckingBlobAccessConfig
  | ChecksummingBlobAccessConfig;

export interface MemoryBlobAccessConfig {
  readonly kind: 'memory';
  readonly maxBytes: number;
}

export interface DiskBlobAccessConfig {
  readonly kind: 'disk';
  readonly path: string;
  readonly maxBytes: number;
  /** `cas` (default) or `ac`: the subdirectory, and whether sizes are part of the key. */
  readonly keyspace?: 'cas' | 'ac';
  /** fsync every blob before it becomes visible. Default false. */
  readonly sync?: boolean;
}

/** Blobs appended into a few large block files under `<path>/<keyspace>-blocks/` (many small blobs are cheap). */
export interface BlockBlobAccessConfig {
  readonly kind: 'blocks';
  readonly path: string;
  readonly maxBytes: number;
  /** When a block is full and the next begins; maxBytes / 16 (64 KiB .. 256 MiB) by default. */
  readonly blockSizeBytes?: number;
  readonly keyspace?: 'cas' | 'ac';
  /** fsync each write batch and finished upload before it becomes visible. Default false. */
  readonly sync?: boolean;
}

/** Checks size and SHA-256 on every put and read (CAS only). */
export interface VerifyingBlobAccessConfig {
  readonly kind: 'verifying';
  readonly backend: BlobAccessConfig;
  readonly wholeReadLimitBytes?: number;
}

/** Trusts positive findMissing answers for ttlMs. */
export interface ExistenceCachingBlobAccessConfig {
  readonly kind: 'existence-caching';
  readonly backend: BlobAccessConfig;
  readonly ttlMs: number;
  readonly maxEntries?: number;
}

/** Action cache only: results whose outputs left the CAS are misses. Needs `deps.contentAddressableStorage`. */
export interface CompletenessCheckingBlobAccessConfig {
  readonly kind: 'completeness-checking';
  readonly backend: BlobAccessConfig;
}

/** Keyspaces whose key is not the content's digest (the action cache): values stored with a SHA-256 trailer, a mismatch is a miss. */
export interface ChecksummingBlobAccessConfig {
  readonly kind: 'checksumming';
  readonly backend: BlobAccessConfig;
}

/** A mistake in a storage configuration; the message names the field, e.g. `storage.backend.maxBytes`. */
export class BlobAccessConfigError extends ConfigError {}

const fail: ConfigFail = (path, problem) => {
  throw new BlobAccessConfigError(`${path}: ${problem}`);
};

const KINDS = ['memory', 'disk', 'blocks', 'verifying', 'existence-caching', 'completeness-checking', 'checksumming'] as const;
const FIELDS: Record<(typeof KINDS)[number], readonly string[]> = {
  memory: ['kind', 'maxBytes'],
  disk: ['kind', 'path', 'maxBytes', 'keyspace', 'sync'],
  blocks: ['kind', 'path', 'maxBytes', 'blockSizeBytes', 'keyspace', 'sync'],
  verifying: ['kind', 'backend', 'wholeReadLimitBytes'],
  'existence-caching': ['kind', 'backend', 'ttlMs', 'maxEntries'],
  'completeness-checking': ['kind', 'backend'],
  checksumming: ['kind', 'backend'],
};

/**
 * Validates an untrusted value (parsed JSON) as a BlobAccessConfig.
 * @param where the name of the value for error messages, e.g. `cas` or `config.json: storage.cas`
 * @throws BlobAccessConfigError naming the first bad field
 */
export function parseBlobAccessConfig(value: unknown, where = 'storage'): BlobAccessConfig {
  const kind = readOneOf(readObject(value, where, undefined, fail)['kind'], fieldPath(where, 'kind'), KINDS, fail);
  const obj = readObject(value, where, FIELDS[kind], fail);
  const at = (key: string) => fieldPath(where, key);
  const optional = <T>(key: string, read: (v: unknown, path: string, f: ConfigFail) => T): { [k: string]: T } =>
    obj[key] === undefined ? {} : { [key]: read(obj[key], at(key), fail) };
  switch (kind) {
    case 'memory':
      return { kind, maxBytes: readPositiveInteger(obj['maxBytes'], at('maxBytes'), fail) };
    case 'disk':
    case 'blocks': {
      const common = {
        path: readNonEmptyString(obj['path'], at('path'), fail),
        maxBytes: readPositiveInteger(obj['maxBytes'], at('maxBytes'), fail),
        ...(optional('keyspace', (v, p, f) => readOneOf(v, p, ['cas', 'ac'] as const, f)) as { keyspace?: 'cas' | 'ac' }),
        ...(optional('sync', readBoolean) as { sync?: boolean }),
      };
      if (kind === 'disk') return { kind, ...common };
      return { kind, ...common, ...(optional('blockSizeBytes', readPositiveInteger) as { blockSizeBytes?: number }) };
    }
    case 'verifying':
      return {
        kind,
        backend: parseBlobAccessConfig(obj['backend'], at('backend')),
        ...(optional('wholeReadLimitBytes', readPositiveInteger) as { wholeReadLimitBytes?: number }),
      };
    case 'existence-caching':
      return {
        kind,
        backend: parseBlobAccessConfig(obj['backend'], at('backend')),
        ttlMs: readPositiveInteger(obj['ttlMs'], at('ttlMs'), fail),
        ...(optional('maxEntries', readPositiveInteger) as { maxEntries?: number }),
      };
    case 'completeness-checking':
    case 'checksumming':
      return { kind, backend: parseBlobAccessConfig(obj['backend'], at('backend')) };
  }
}
