import { parseCacheServerSections, type CacheServerConfig, type ConfigOverrides } from './cache-server-config.js';
import { parseSchedulerConfig, type SchedulerConfig } from './execution/scheduler-config.js';
import { parseStorageNodeSections } from './storage-node-config.js';
import { throwConfigError } from '../src/core/index.js';

/**
 * `kiln storage --config FILE`: a storage node serving CAS/AC. Its listen address (`host`, `port`),
 * its instances each with their BlobAccess configs (`instanceNames` + `storage`, or `instances`), and
 * `tls` / `auth` as the scheduler's; `limits` and `chunking` as any cache server.
 */
export type StorageRoleConfig = CacheServerConfig;

/** `kiln scheduler --config FILE`: the cache server sections, and `execution` for the scheduler. */
export interface SchedulerRoleConfig {
  readonly server: CacheServerConfig;
  readonly execution: SchedulerConfig;
}

/** The config of a storage node (storage-node-config.ts: a store of its own, no execution, no completeness checks). */
export const parseStorageRoleConfig: (value: unknown, baseDir: string, overrides?: ConfigOverrides) => StorageRoleConfig = parseStorageNodeSections;

/** The config of a scheduler: a cache server's sections plus `execution` (otherSections as parseStorageRoleConfig's); errors are ConfigErrors `field.path: problem`. */
export function parseSchedulerRoleConfig(
  value: unknown,
  baseDir: string,
  overrides: ConfigOverrides = {},
  otherSections: readonly string[] = [],
): SchedulerRoleConfig {
  const server = parseCacheServerSections(value, baseDir, overrides, ['execution', ...otherSections]);
  return {
    server,
    execution: parseSchedulerConfig((value as Record<string, unknown>)['execution'], throwConfigError, baseDir, overrides.storageDir),
  };
}
