import {
  ConfigError,
  fieldPath,
  readBoolean,
  readInteger,
  readNonEmptyString,
  readObject,
  readOneOf,
  readPositiveInteger,
  readString,
  type ConfigFail,
} from '../json-config.js';

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
  | ChecksummingBlobAccessConfig
  | GrpcBlobAccessConfig
  | ShardingBlobAccessConfig
  | MirroredBlobAccessConfig;

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

/**
 * A storage node (`kiln storage`, or any REAPI server) reached over gRPC: the CAS through
 * ContentAddressableStorage and ByteStream, the action cache (`keyspace: 'ac'`) through ActionCache.
 * Built by the `connectRemote` dependency (src/remote), since core does not speak gRPC.
 */
export interface GrpcBlobAccessConfig {
  readonly kind: 'grpc';
  /** `grpc://host:port`, `grpcs://host:port` (TLS) or `unix:///path`, as `--remote_cache` takes it. */
  readonly endpoint: string;
  /** The instance name on that server; "" by default. */
  readonly instanceName?: string;
  readonly keyspace?: 'cas' | 'ac';
  /** PEM files: the CA to trust (`--tls_certificate`), and a client certificate and key for mTLS. */
  readonly tls?: { readonly ca?: string; readonly certificate?: string; readonly key?: string };
  /** A file holding the bearer token sent as `authorization: Bearer TOKEN`. */
  readonly tokenFile?: string;
  /** Deadline of each unary call, idle bound of each stream; 60 s by default. */
  readonly timeoutMs?: number;
  /** Retries of a call that failed with UNAVAILABLE, RESOURCE_EXHAUSTED, ABORTED, DEADLINE_EXCEEDED; 2 by default. */
  readonly retries?: number;
}

/** Blobs spread over named backends by weighted rendezvous hashing of their digest. */
export interface ShardingBlobAccessConfig {
  readonly kind: 'sharding';
  readonly shards: readonly ShardConfig[];
}

export interface ShardConfig {
  /** What blobs hash against: keep it when the backend's address changes. Unique. */
  readonly name: string;
  /** Share of the blobs relative to the other shards; 1 by default. */
  readonly weight?: number;
  readonly backend: BlobAccessConfig;
}

/** Every blob on both backends; a copy missing or corrupt on one is repaired from the other. */
export interface MirroredBlobAccessConfig {
  readonly kind: 'mirrored';
  readonly a: BlobAccessConfig;
  readonly b: BlobAccessConfig;
}

/** The configs a config wraps or spreads over (its backends), in order. */
export function backendsOf(config: BlobAccessConfig): readonly BlobAccessConfig[] {
  switch (config.kind) {
    case 'sharding':
      return config.shards.map((s) => s.backend);
    case 'mirrored':
      return [config.a, config.b];
    default:
      return 'backend' in config ? [config.backend] : [];
  }
}

/** `config` with each backend replaced by `f(backend)` (leaves as they are). */
export function mapBackends(config: BlobAccessConfig, f: (backend: BlobAccessConfig) => BlobAccessConfig): BlobAccessConfig {
  switch (config.kind) {
    case 'sharding':
      return { ...config, shards: config.shards.map((s) => ({ ...s, backend: f(s.backend) })) };
    case 'mirrored':
      return { ...config, a: f(config.a), b: f(config.b) };
    default:
      return 'backend' in config ? ({ ...config, backend: f(config.backend) } as BlobAccessConfig) : config;
  }
}

/** A mistake in a storage configuration; the message names the field, e.g. `storage.backend.maxBytes`. */
export class BlobAccessConfigError extends ConfigError {}

const fail: ConfigFail = (path, problem) => {
  throw new BlobAccessConfigError(`${path}: ${problem}`);
};

const KINDS = ['memory', 'disk', 'blocks', 'verifying', 'existence-caching', 'completeness-checking', 'checksumming', 'grpc', 'sharding', 'mirrored'] as const;
const FIELDS: Record<(typeof KINDS)[number], readonly string[]> = {
  memory: ['kind', 'maxBytes'],
  disk: ['kind', 'path', 'maxBytes', 'keyspace', 'sync'],
  blocks: ['kind', 'path', 'maxBytes', 'blockSizeBytes', 'keyspace', 'sync'],
  verifying: ['kind', 'backend', 'wholeReadLimitBytes'],
  'existence-caching': ['kind', 'backend', 'ttlMs', 'maxEntries'],
  'completeness-checking': ['kind', 'backend'],
  checksumming: ['kind', 'backend'],
  grpc: ['kind', 'endpoint', 'instanceName', 'keyspace', 'tls', 'tokenFile', 'timeoutMs', 'retries'],
  sharding: ['kind', 'shards'],
  mirrored: ['kind', 'a', 'b'],
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
    case 'grpc':
      return parseGrpc(obj, where);
    case 'sharding':
      return { kind, shards: parseShards(obj['shards'], at('shards')) };
    case 'mirrored':
      return { kind, a: parseBlobAccessConfig(obj['a'], at('a')), b: parseBlobAccessConfig(obj['b'], at('b')) };
  }
}

function parseGrpc(obj: Record<string, unknown>, where: string): GrpcBlobAccessConfig {
  const at = (key: string) => fieldPath(where, key);
  const tls = obj['tls'] === undefined ? undefined : readObject(obj['tls'], at('tls'), ['ca', 'certificate', 'key'], fail);
  const file = (key: 'ca' | 'certificate' | 'key') =>
    tls?.[key] === undefined ? {} : { [key]: readNonEmptyString(tls[key], fieldPath(at('tls'), key), fail) };
  if (tls && (tls['certificate'] === undefined) !== (tls['key'] === undefined))
    fail(at('tls'), 'a client certificate needs its key, and a key its certificate');
  return {
    kind: 'grpc',
    endpoint: readNonEmptyString(obj['endpoint'], at('endpoint'), fail),
    ...(obj['instanceName'] === undefined ? {} : { instanceName: readString(obj['instanceName'], at('instanceName'), fail) }),
    ...(obj['keyspace'] === undefined ? {} : { keyspace: readOneOf(obj['keyspace'], at('keyspace'), ['cas', 'ac'] as const, fail) }),
    ...(tls ? { tls: { ...file('ca'), ...file('certificate'), ...file('key') } } : {}),
    ...(obj['tokenFile'] === undefined ? {} : { tokenFile: readNonEmptyString(obj['tokenFile'], at('tokenFile'), fail) }),
    ...(obj['timeoutMs'] === undefined ? {} : { timeoutMs: readPositiveInteger(obj['timeoutMs'], at('timeoutMs'), fail) }),
    ...(obj['retries'] === undefined ? {} : { retries: readInteger(obj['retries'], at('retries'), 0, 100, fail) }),
  };
}

function parseShards(value: unknown, where: string): ShardConfig[] {
  if (!Array.isArray(value) || value.length === 0) return fail(where, 'expected a non-empty array of {name, weight, backend}');
  const names = new Set<string>();
  return value.map((item: unknown, i) => {
    const path = fieldPath(where, i);
    const shard = readObject(item, path, ['name', 'weight', 'backend'], fail);
    const name = readNonEmptyString(shard['name'], fieldPath(path, 'name'), fail);
    if (names.has(name)) fail(fieldPath(path, 'name'), `shard name ${JSON.stringify(name)} is used twice (blobs hash against the names)`);
    names.add(name);
    return {
      name,
      ...(shard['weight'] === undefined ? {} : { weight: readInteger(shard['weight'], fieldPath(path, 'weight'), 1, 2 ** 32, fail) }),
      backend: parseBlobAccessConfig(shard['backend'], fieldPath(path, 'backend')),
    };
  });
}
