import { KilnError } from '../errors.js';

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
  | CompletenessCheckingBlobAccessConfig;

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

/** A mistake in a storage configuration; the message names the field, e.g. `storage.backend.maxBytes`. */
export class BlobAccessConfigError extends KilnError {}

/**
 * Validates an untrusted value (parsed JSON) as a BlobAccessConfig.
 * @param where the name of the value for error messages, e.g. `cas` or `config.json: storage.cas`
 * @throws BlobAccessConfigError naming the first bad field
 */
export function parseBlobAccessConfig(value: unknown, where = 'storage'): BlobAccessConfig {
  const obj = record(value, where);
  const kind = obj['kind'];
  switch (kind) {
    case 'memory':
      only(obj, where, ['kind', 'maxBytes']);
      return { kind, maxBytes: positiveInteger(obj['maxBytes'], `${where}.maxBytes`) };
    case 'disk':
    case 'blocks': {
      only(obj, where, kind === 'disk' ? ['kind', 'path', 'maxBytes', 'keyspace', 'sync'] : ['kind', 'path', 'maxBytes', 'blockSizeBytes', 'keyspace', 'sync']);
      const keyspace = obj['keyspace'];
      if (keyspace !== undefined && keyspace !== 'cas' && keyspace !== 'ac') {
        throw new BlobAccessConfigError(`${where}.keyspace: must be "cas" or "ac", got ${JSON.stringify(keyspace)}`);
      }
      const sync = obj['sync'];
      if (sync !== undefined && typeof sync !== 'boolean') throw new BlobAccessConfigError(`${where}.sync: must be true or false`);
      const common = {
        path: nonEmptyString(obj['path'], `${where}.path`),
        maxBytes: positiveInteger(obj['maxBytes'], `${where}.maxBytes`),
        ...(keyspace !== undefined ? { keyspace: keyspace as 'cas' | 'ac' } : {}),
        ...(sync !== undefined ? { sync } : {}),
      };
      if (kind === 'disk') return { kind, ...common };
      const blockSize = obj['blockSizeBytes'];
      return {
        kind,
        ...common,
        ...(blockSize !== undefined ? { blockSizeBytes: positiveInteger(blockSize, `${where}.blockSizeBytes`) } : {}),
      };
    }
    case 'verifying': {
      only(obj, where, ['kind', 'backend', 'wholeReadLimitBytes']);
      const limit = obj['wholeReadLimitBytes'];
      return {
        kind,
        backend: parseBlobAccessConfig(obj['backend'], `${where}.backend`),
        ...(limit !== undefined ? { wholeReadLimitBytes: positiveInteger(limit, `${where}.wholeReadLimitBytes`) } : {}),
      };
    }
    case 'existence-caching': {
      only(obj, where, ['kind', 'backend', 'ttlMs', 'maxEntries']);
      const maxEntries = obj['maxEntries'];
      return {
        kind,
        backend: parseBlobAccessConfig(obj['backend'], `${where}.backend`),
        ttlMs: positiveInteger(obj['ttlMs'], `${where}.ttlMs`),
        ...(maxEntries !== undefined ? { maxEntries: positiveInteger(maxEntries, `${where}.maxEntries`) } : {}),
      };
    }
    case 'completeness-checking':
      only(obj, where, ['kind', 'backend']);
      return { kind, backend: parseBlobAccessConfig(obj['backend'], `${where}.backend`) };
    default:
      throw new BlobAccessConfigError(
        `${where}.kind: must be one of "memory", "disk", "blocks", "verifying", "existence-caching", "completeness-checking", got ${JSON.stringify(kind)}`,
      );
  }
}

function record(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BlobAccessConfigError(`${where}: must be an object with a "kind"`);
  }
  return value as Record<string, unknown>;
}

function only(obj: Record<string, unknown>, where: string, allowed: string[]): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) {
      throw new BlobAccessConfigError(`${where}.${key}: unknown field for kind "${String(obj['kind'])}" (allowed: ${allowed.join(', ')})`);
    }
  }
}

function positiveInteger(value: unknown, where: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new BlobAccessConfigError(`${where}: must be a positive integer, got ${JSON.stringify(value)}`);
  }
  return value;
}

function nonEmptyString(value: unknown, where: string): string {
  if (typeof value !== 'string' || value === '') throw new BlobAccessConfigError(`${where}: must be a non-empty string`);
  return value;
}
