import { resolve } from 'node:path';
import { readInteger, readNonEmptyString, readObject, type ConfigFail } from '../../src/core/index.js';

/**
 * The `buildEvents` section: the Build Event Service on the cluster's port and the bounds of what it
 * keeps. Absent, the service is not served (a client's `--bes_backend` gets UNIMPLEMENTED).
 */
export interface BuildEventsConfig {
  /** Invocations kept; past it the oldest that is no longer streaming is dropped. */
  readonly maxInvocations: number;
  /** Build events one invocation may store; one more is RESOURCE_EXHAUSTED. */
  readonly maxEventsPerInvocation: number;
  /** Bytes of build events one invocation may store; past it RESOURCE_EXHAUSTED. */
  readonly maxBytesPerInvocation: number;
  /** Bytes of build events kept over all invocations; past it the oldest that are no longer streaming are dropped. */
  readonly maxTotalBytes: number;
  /** A folder to keep invocations in across restarts (absolute); memory only when absent. */
  readonly path?: string;
}

export const DEFAULT_BUILD_EVENTS: BuildEventsConfig = {
  maxInvocations: 1000,
  maxEventsPerInvocation: 100_000,
  maxBytesPerInvocation: 64 * 1024 * 1024,
  maxTotalBytes: 1024 * 1024 * 1024,
};

const LIMIT_FIELDS = ['maxInvocations', 'maxEventsPerInvocation', 'maxBytesPerInvocation', 'maxTotalBytes'] as const;

/**
 * Validates `buildEvents` (`{}` turns the service on with the defaults). `path` is resolved against
 * `baseDir` (the config file's folder).
 * @throws ConfigError through `fail`, naming `buildEvents.FIELD`
 */
export function parseBuildEventsConfig(value: unknown, baseDir: string, fail: ConfigFail): BuildEventsConfig {
  const obj = readObject(value, 'buildEvents', [...LIMIT_FIELDS, 'path'], fail);
  const config: { -readonly [K in keyof BuildEventsConfig]: BuildEventsConfig[K] } = { ...DEFAULT_BUILD_EVENTS };
  for (const key of LIMIT_FIELDS) {
    if (obj[key] !== undefined) config[key] = readInteger(obj[key], `buildEvents.${key}`, 1, Number.MAX_SAFE_INTEGER, fail);
  }
  if (config.maxTotalBytes < config.maxBytesPerInvocation) {
    fail('buildEvents.maxTotalBytes', `must be at least maxBytesPerInvocation (${config.maxBytesPerInvocation}), got ${config.maxTotalBytes}`);
  }
  if (obj['path'] !== undefined) config.path = resolve(baseDir, readNonEmptyString(obj['path'], 'buildEvents.path', fail));
  return config;
}
