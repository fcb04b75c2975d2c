import { isAbsolute, join, resolve } from 'node:path';
import { inConfigFile, readInteger, readNonEmptyString, readObject, readOneOf, readString, throwConfigError, type ConfigFail } from '../src/core/index.js';
import { backendsOf, mapBackends, parseBlobAccessConfig, type BlobAccessConfig } from '../src/core/blobstore/index.js';
import { parseRemoteEndpoint } from '../src/remote/index.js';
import { parseBuildEventsConfig, type BuildEventsConfig } from './build-events/build-events-config.js';
import { FAST_CDC_MAX_AVERAGE_BYTES, FAST_CDC_MIN_AVERAGE_BYTES } from './fast-cdc-2020.js';
import { instanceNameProblem } from './instance-name.js';
import { parseSecurityConfig, type SecurityConfig } from './security/security-config.js';

/** The storage of one instance: its CAS and its action cache. */
export interface InstanceStorageConfig {
  readonly name: string;
  readonly cas: BlobAccessConfig;
  readonly actionCache: BlobAccessConfig;
  /**
   * UpdateActionResult refuses a result whose blobs are not in this instance's CAS (default true).
   * False on a storage node: its CAS holds one shard, and the server in front checked the whole.
   */
  readonly checkActionResultReferences?: boolean;
}

export interface CacheServerLimits {
  /** Advertised and enforced: total blob bytes of one BatchUpdateBlobs / BatchReadBlobs request. */
  readonly maxBatchTotalSizeBytes: number;
  /** Largest blob accepted for upload; 0 for no limit. */
  readonly maxCasBlobSizeBytes: number;
  readonly maxConcurrentRequests: number;
  readonly maxInFlightBytes: number;
  /** Retry delay suggested with RESOURCE_EXHAUSTED. */
  readonly retryAfterMs: number;
  /** Size of each ByteStream ReadResponse. */
  readonly byteStreamChunkBytes: number;
  /** Budget for inline stdout/stderr/output file contents in one GetActionResult answer. */
  readonly maxInlineBytes: number;
  /** A resumable upload nobody writes to for this long is discarded. */
  readonly uploadIdleTimeoutMs: number;
  /** Directories per GetTree response when the client asks for page_size 0. */
  readonly defaultTreePageSize: number;
  /** How long a disk store keeps a blob from eviction once a client was told it exists or stored it (a build's lifetime). */
  readonly pinTtlMs: number;
}

export interface CacheServerConfig {
  readonly host: string;
  /** 0 picks an ephemeral port. */
  readonly port: number;
  readonly instances: readonly InstanceStorageConfig[];
  readonly limits: CacheServerLimits;
  /** FastCDC 2020 parameters for SplitBlob, advertised in the capabilities. */
  readonly chunking: { readonly avgChunkSizeBytes: number; readonly seed: number };
  /** TLS of the port and authentication of its calls (`tls`, `auth`; off by default). */
  readonly security: SecurityConfig;
  /** A plaintext port serving only grpc.health.v1.Health (Kubernetes' grpc probe speaks no TLS); none when absent. */
  readonly healthPort?: number;
  /** The Build Event Service on the port and its bounds (`buildEvents`); not served when absent. */
  readonly buildEvents?: BuildEventsConfig;
  /** A plaintext HTTP port serving Prometheus metrics at /metrics; none when absent (0: a free port). */
  readonly metricsPort?: number;
}

export const DEFAULT_LIMITS: CacheServerLimits = {
  maxBatchTotalSizeBytes: 4 * 1024 * 1024,
  maxCasBlobSizeBytes: 0,
  maxConcurrentRequests: 500,
  maxInFlightBytes: 256 * 1024 * 1024,
  retryAfterMs: 1000,
  // 1 MiB read messages: a quarter of the per-message cost of 256 KiB (bench/cas), well under gRPC's 4 MiB default limit.
  byteStreamChunkBytes: 1024 * 1024,
  maxInlineBytes: 1024 * 1024,
  uploadIdleTimeoutMs: 10 * 60 * 1000,
  defaultTreePageSize: 1000,
  pinTtlMs: 60 * 60 * 1000,
};

const DEFAULT_MEMORY_BYTES = 1024 * 1024 * 1024;
const DEFAULT_DISK_BYTES = 64 * 1024 * 1024 * 1024;

/** Storage given in short form: one kind for every instance. */
type StorageShorthand =
  | { readonly kind: 'memory'; readonly maxBytes: number }
  | { readonly kind: 'disk' | 'blocks'; readonly path: string; readonly maxBytes: number };

/**
 * The BlobAccess configs of one instance for a shorthand store. Disk: the default instance uses
 * `path/cas` and `path/ac` (Bazel's --disk_cache layout, one file per blob); blocks: `path/cas-blocks`
 * and `path/ac-blocks` (block files); instance `x/y` uses `path/instances/x/y/`.
 * Every CAS is verified; every action cache is completeness-checked against its CAS.
 */
export function instanceStorageFor(name: string, storage: StorageShorthand): InstanceStorageConfig {
  if (storage.kind === 'memory') {
    return {
      name,
      cas: { kind: 'verifying', backend: { kind: 'memory', maxBytes: storage.maxBytes } },
      actionCache: { kind: 'completeness-checking', backend: { kind: 'memory', maxBytes: actionCacheBytes(storage.maxBytes) } },
    };
  }
  const dir = name === '' ? storage.path : join(storage.path, 'instances', ...name.split('/'));
  return {
    name,
    cas: { kind: 'verifying', backend: { kind: storage.kind, path: dir, maxBytes: storage.maxBytes, keyspace: 'cas' } },
    actionCache: {
      kind: 'completeness-checking',
      backend: actionCacheBackend(storage.kind, dir, actionCacheBytes(storage.maxBytes)),
    },
  };
}

/**
 * A disk file's name is the action's digest, which says nothing about the result inside, so disk
 * entries carry a checksum; the block store checksums its entries itself.
 */
function actionCacheBackend(kind: 'disk' | 'blocks', path: string, maxBytes: number): BlobAccessConfig {
  const store: BlobAccessConfig = { kind, path, maxBytes, keyspace: 'ac' };
  return kind === 'disk' ? { kind: 'checksumming', backend: store } : store;
}

/** Action results are small: an eighth of the CAS budget, at least 16 MiB. */
function actionCacheBytes(casBytes: number): number {
  return Math.max(16 * 1024 * 1024, Math.floor(casBytes / 8));
}

export interface ConfigOverrides {
  readonly host?: string;
  readonly port?: number;
  /** `--storage DIR`: a disk store at DIR for every instance. */
  readonly storageDir?: string;
}

/** The top-level fields of a cache server's config (every role that serves CAS/AC reads them). */
export const CACHE_SERVER_SECTIONS = [
  'host',
  'port',
  'instanceNames',
  'storage',
  'instances',
  'limits',
  'chunking',
  'tls',
  'auth',
  'healthPort',
  'buildEvents',
  'metricsPort',
] as const;

/**
 * Validates a parsed JSON config file and applies command-line overrides.
 *
 * ```json
 * { "host": "127.0.0.1", "port": 8980,
 *   "instanceNames": ["", "ci"],
 *   "storage": { "kind": "disk", "path": "/var/cache/kiln", "maxBytes": 68719476736 },
 *   "instances": { "special": { "cas": { ...BlobAccessConfig }, "actionCache": { ... } } },
 *   "limits": { "maxBatchTotalSizeBytes": 4194304, "maxConcurrentRequests": 2000, ... },
 *   "chunking": { "avgChunkSizeBytes": 524288, "seed": 0 } }
 * ```
 * Relative paths are resolved against `baseDir` (the config file's folder).
 * @param where the file name for error messages
 * @throws ConfigError `where: field: problem`
 */
export function parseCacheServerConfig(value: unknown, where: string, baseDir: string, overrides: ConfigOverrides = {}): CacheServerConfig {
  // `execution` (the scheduler's, execution/scheduler-config.ts) and `executor` (cluster up's) are
  // other parsers' sections of the same file.
  return inConfigFile(where, () => parseCacheServerSections(value, baseDir, overrides, ['execution', 'executor']));
}

/**
 * The cache server sections of a config (CACHE_SERVER_SECTIONS); `otherSections` are the top-level
 * fields other parsers of the same file read. Errors are ConfigErrors `field.path: problem`.
 */
export function parseCacheServerSections(
  value: unknown,
  baseDir: string,
  overrides: ConfigOverrides = {},
  otherSections: readonly string[] = [],
): CacheServerConfig {
  const fail = throwConfigError;
  const obj = readObject(value, '', [...CACHE_SERVER_SECTIONS, ...otherSections], fail);

  const host = overrides.host ?? optionalString(obj['host'], 'host', fail) ?? '127.0.0.1';
  const port = overrides.port ?? optionalInteger(obj['port'], 'port', 0, 65535, fail) ?? 0;

  let storage: StorageShorthand = { kind: 'memory', maxBytes: DEFAULT_MEMORY_BYTES };
  if (overrides.storageDir !== undefined) {
    // Block files: many small blobs cost a slice of a write each rather than a file each.
    storage = { kind: 'blocks', path: resolve(baseDir, overrides.storageDir), maxBytes: DEFAULT_DISK_BYTES };
  } else if (obj['storage'] !== undefined) {
    storage = parseStorage(obj['storage'], baseDir, fail);
  }

  const names: string[] = [];
  const addName = (name: string, field: string): void => {
    const problem = instanceNameProblem(name);
    if (problem) fail(field, problem);
    if (!names.includes(name)) names.push(name);
  };
  if (obj['instanceNames'] !== undefined) {
    const list = obj['instanceNames'];
    if (!Array.isArray(list) || list.length === 0) fail('instanceNames', 'must be a non-empty array of strings');
    (list as unknown[]).forEach((n, i) => {
      if (typeof n !== 'string') fail(`instanceNames[${i}]`, 'must be a string');
      addName(n as string, `instanceNames[${i}]`);
    });
  }
  const explicit = new Map<string, InstanceStorageConfig>();
  if (obj['instances'] !== undefined) {
    const map = record(obj['instances'], 'instances', fail);
    for (const [name, spec] of Object.entries(map)) {
      const field = `instances[${JSON.stringify(name)}]`;
      addName(name, field);
      const s = record(spec, field, fail);
      allowOnly(s, field, ['cas', 'actionCache'], fail);
      explicit.set(name, {
        name,
        cas: blobAccessConfig(s['cas'], `${field}.cas`, baseDir),
        actionCache: blobAccessConfig(s['actionCache'], `${field}.actionCache`, baseDir),
      });
    }
  }
  if (names.length === 0) names.push('');
  const instances = names.map((n) => explicit.get(n) ?? instanceStorageFor(n, storage));

  const limits = { ...DEFAULT_LIMITS };
  if (obj['limits'] !== undefined) {
    const l = record(obj['limits'], 'limits', fail);
    allowOnly(l, 'limits', Object.keys(DEFAULT_LIMITS), fail);
    for (const key of Object.keys(DEFAULT_LIMITS) as (keyof CacheServerLimits)[]) {
      if (l[key] === undefined) continue;
      const min = key === 'maxCasBlobSizeBytes' || key === 'retryAfterMs' ? 0 : 1;
      (limits as Record<string, number>)[key] = optionalInteger(l[key], `limits.${key}`, min, Number.MAX_SAFE_INTEGER, fail)!;
    }
  }

  let chunking = { avgChunkSizeBytes: 512 * 1024, seed: 0 };
  if (obj['chunking'] !== undefined) {
    const c = record(obj['chunking'], 'chunking', fail);
    allowOnly(c, 'chunking', ['avgChunkSizeBytes', 'seed'], fail);
    const avg =
      optionalInteger(c['avgChunkSizeBytes'], 'chunking.avgChunkSizeBytes', FAST_CDC_MIN_AVERAGE_BYTES, FAST_CDC_MAX_AVERAGE_BYTES, fail) ??
      chunking.avgChunkSizeBytes;
    if ((avg & (avg - 1)) !== 0) fail('chunking.avgChunkSizeBytes', `must be a power of two, got ${avg}`);
    chunking = { avgChunkSizeBytes: avg, seed: optionalInteger(c['seed'], 'chunking.seed', 0, 0xffffffff, fail) ?? 0 };
  }
  const security = parseSecurityConfig(obj['tls'], obj['auth'], names, baseDir, fail);
  const healthPort = optionalInteger(obj['healthPort'], 'healthPort', 0, 65535, fail);
  const buildEvents = obj['buildEvents'] === undefined ? undefined : parseBuildEventsConfig(obj['buildEvents'], baseDir, fail);
  const metricsPort = optionalInteger(obj['metricsPort'], 'metricsPort', 0, 65535, fail);
  return {
    host,
    port,
    instances,
    limits,
    chunking,
    security,
    ...(healthPort === undefined ? {} : { healthPort }),
    ...(buildEvents === undefined ? {} : { buildEvents }),
    ...(metricsPort === undefined ? {} : { metricsPort }),
  };
}

function parseStorage(value: unknown, baseDir: string, fail: ConfigFail): StorageShorthand {
  const s = record(value, 'storage', fail);
  const kind = readOneOf(s['kind'], 'storage.kind', ['memory', 'disk', 'blocks'] as const, fail);
  if (kind === 'memory') {
    allowOnly(s, 'storage', ['kind', 'maxBytes'], fail);
    return { kind, maxBytes: optionalInteger(s['maxBytes'], 'storage.maxBytes', 1, Number.MAX_SAFE_INTEGER, fail) ?? DEFAULT_MEMORY_BYTES };
  }
  allowOnly(s, 'storage', ['kind', 'path', 'maxBytes'], fail);
  return {
    kind,
    path: resolve(baseDir, readNonEmptyString(s['path'], 'storage.path', fail)),
    maxBytes: optionalInteger(s['maxBytes'], 'storage.maxBytes', 1, Number.MAX_SAFE_INTEGER, fail) ?? DEFAULT_DISK_BYTES,
  };
}

/** Validates a full BlobAccessConfig (its errors name `field` and below) and makes its disk paths absolute. */
function blobAccessConfig(value: unknown, field: string, baseDir: string): BlobAccessConfig {
  const parsed = parseBlobAccessConfig(value, field);
  checkEndpoints(parsed, field, throwConfigError);
  return absolutePaths(parsed, baseDir);
}

/** Every `grpc` endpoint is one Kiln's client can dial (checked now, not when the server starts). */
function checkEndpoints(config: BlobAccessConfig, field: string, fail: ConfigFail): void {
  if (config.kind === 'grpc') {
    try {
      parseRemoteEndpoint(config.endpoint, 'endpoint');
    } catch (e) {
      fail(`${field}.endpoint`, (e as Error).message.replace(/^endpoint=/, ''));
    }
  }
  const paths = childPaths(config, field);
  backendsOf(config).forEach((backend, i) => checkEndpoints(backend, paths[i]!, fail));
}

/** The field paths of a config's backends, in backendsOf's order. */
function childPaths(config: BlobAccessConfig, field: string): string[] {
  if (config.kind === 'sharding') return config.shards.map((_, i) => `${field}.shards[${i}].backend`);
  if (config.kind === 'mirrored') return [`${field}.a`, `${field}.b`];
  return [`${field}.backend`];
}

function absolutePaths(config: BlobAccessConfig, baseDir: string): BlobAccessConfig {
  const absolute = (path: string) => (isAbsolute(path) ? path : resolve(baseDir, path));
  if (config.kind === 'disk' || config.kind === 'blocks') return { ...config, path: absolute(config.path) };
  if (config.kind === 'grpc') {
    const tls = config.tls && Object.fromEntries(Object.entries(config.tls).map(([key, path]) => [key, absolute(path as string)]));
    return { ...config, ...(tls ? { tls } : {}), ...(config.tokenFile ? { tokenFile: absolute(config.tokenFile) } : {}) };
  }
  return mapBackends(config, (backend) => absolutePaths(backend, baseDir));
}

function record(value: unknown, field: string, fail: ConfigFail): Record<string, unknown> {
  return readObject(value, field, undefined, fail);
}

function allowOnly(obj: Record<string, unknown>, field: string, allowed: readonly string[], fail: ConfigFail): void {
  readObject(obj, field, allowed, fail);
}

function optionalString(value: unknown, field: string, fail: ConfigFail): string | undefined {
  return value === undefined ? undefined : readString(value, field, fail);
}

function optionalInteger(value: unknown, field: string, min: number, max: number, fail: ConfigFail): number | undefined {
  return value === undefined ? undefined : readInteger(value, field, min, max, fail);
}
