import type { BlobAccessConfig } from '../src/core/blobstore/index.js';
import { inConfigFile, throwConfigError } from '../src/core/index.js';
import { parseCacheServerSections, type CacheServerConfig, type ConfigOverrides } from './cache-server-config.js';

/**
 * The config of `kiln storage`: the cache server's (`host`, `port`, `instanceNames`, `storage`,
 * `instances`, `limits`, `chunking`, `tls`, `auth`), served as a storage node behind a scheduler
 * whose CAS shards and mirrors over several nodes. So a node's action cache is not
 * completeness-checked and UpdateActionResult does not look for the result's blobs in its CAS: that
 * CAS holds one shard, and the scheduler in front checked the whole. A node needs a store of its
 * own (`storage`, `instances` or `--storage DIR`); it runs no actions (`execution`, `executor` are
 * errors).
 * Errors are ConfigErrors `field.path: problem` (parseStorageNodeConfig adds the file's name).
 */
export function parseStorageNodeSections(value: unknown, baseDir: string, overrides: ConfigOverrides = {}): CacheServerConfig {
  const fields = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  for (const key of ['execution', 'executor']) {
    if (fields[key] !== undefined) throwConfigError(key, "a storage node runs no actions (this section belongs to 'kiln scheduler')");
  }
  if (fields['buildEvents'] !== undefined) throwConfigError('buildEvents', "a storage node serves no build events (this section belongs to 'kiln scheduler')");
  const config = parseCacheServerSections(value, baseDir, overrides);
  // Checked last, so that a mistake in the sections given is the one reported.
  if (fields['storage'] === undefined && fields['instances'] === undefined && overrides.storageDir === undefined) {
    throwConfigError('storage', `a storage node needs a store, e.g. {"kind": "blocks", "path": "DIR", "maxBytes": N}, or --storage DIR`);
  }
  return {
    ...config,
    instances: config.instances.map((i) => ({ ...i, actionCache: withoutCompletenessCheck(i.actionCache), checkActionResultReferences: false })),
  };
}

/** parseStorageNodeSections of a config file named `where`. */
export function parseStorageNodeConfig(value: unknown, where: string, baseDir: string, overrides: ConfigOverrides = {}): CacheServerConfig {
  return inConfigFile(where, () => parseStorageNodeSections(value, baseDir, overrides));
}

function withoutCompletenessCheck(config: BlobAccessConfig): BlobAccessConfig {
  return config.kind === 'completeness-checking' ? config.backend : config;
}
