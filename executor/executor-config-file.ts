import { resolve } from 'node:path';
import {
  fieldPath,
  readInteger,
  readNonEmptyString,
  readObject,
  readOneOf,
  readPositiveInteger,
  readString,
  throwConfigError,
  type ConfigFail,
} from '../src/core/index.js';
import { parseBlobAccessConfig, type BlobAccessConfig } from '../src/core/blobstore/index.js';
import { RESOURCE_LIMIT_KEYS } from './runners/resource-limits.js';

/** How the executor connects to a secured scheduler: PEM files and a file holding its token. */
export const SCHEDULER_CREDENTIAL_KEYS = ['tls-ca', 'tls-certificate', 'tls-key', 'token-file'] as const;

/** The keys of `kiln executor --config FILE`: the flags' names, `config` excepted. */
export const EXECUTOR_CONFIG_KEYS = [
  'scheduler',
  'runner',
  'slots',
  'platform',
  'instance',
  'work-dir',
  'cache-size',
  'name',
  'image',
  'health-port',
  'metrics-port',
  'drain-timeout',
  ...SCHEDULER_CREDENTIAL_KEYS,
  ...RESOURCE_LIMIT_KEYS,
] as const;

export type ExecutorConfigKey = (typeof EXECUTOR_CONFIG_KEYS)[number];

/** Keys only a config file sets (an object has no flag form): where the executor reads inputs and writes outputs instead of through the scheduler. */
const FILE_ONLY_KEYS = ['storage'] as const;

/** What an executor config file sets; absent keys are left to the flags and the defaults. */
export interface ExecutorConfigFile {
  readonly scheduler?: string;
  readonly runner?: 'local' | 'docker';
  readonly slots?: number;
  /** `NAME=VALUE` strings, as `--platform` takes them. */
  readonly platform?: readonly string[];
  readonly instance?: string;
  readonly 'work-dir'?: string;
  readonly 'cache-size'?: number;
  readonly name?: string;
  /** The docker runner's default image. */
  readonly image?: string;
  readonly 'health-port'?: number;
  readonly 'metrics-port'?: number;
  readonly 'drain-timeout'?: number;
  /** The cluster's CAS as a BlobAccess config (the scheduler instance's `cas`: storage nodes, mirrored or sharded). */
  readonly storage?: BlobAccessConfig;
  readonly 'tls-ca'?: string;
  readonly 'tls-certificate'?: string;
  readonly 'tls-key'?: string;
  readonly 'token-file'?: string;
  /** The resource-limit keys, as written (parseResourceLimitPolicy checks their values). */
  readonly limits: Readonly<Record<string, string | number>>;
}

/**
 * Reads the JSON object of an executor config file: an unknown key or a value of the wrong type is a
 * ConfigError (through `fail`) whose message starts with the field's path (`slots: expected ...`,
 * `platform[1]: expected ...`).
 */
export function readExecutorConfigFile(value: unknown, fail: ConfigFail = throwConfigError): ExecutorConfigFile {
  const obj = readObject(value, '', [...EXECUTOR_CONFIG_KEYS, ...FILE_ONLY_KEYS], fail);
  const limits: Record<string, string | number> = {};
  for (const key of RESOURCE_LIMIT_KEYS) {
    const v = obj[key];
    if (v === undefined) continue;
    if (typeof v !== 'string' && typeof v !== 'number') fail(key, `expected a number or a size such as "2g", got ${JSON.stringify(v)}`);
    limits[key] = v;
  }
  const file: { -readonly [K in keyof ExecutorConfigFile]: ExecutorConfigFile[K] } = { limits };
  const read = <K extends Exclude<keyof ExecutorConfigFile, 'limits'>>(
    key: K,
    parse: (v: unknown, path: string) => NonNullable<ExecutorConfigFile[K]>,
  ): void => {
    if (obj[key] !== undefined) file[key] = parse(obj[key], key);
  };
  read('scheduler', (v, p) => readNonEmptyString(v, p, fail));
  read('runner', (v, p) => readOneOf(v, p, ['local', 'docker'] as const, fail));
  read('slots', (v, p) => readPositiveInteger(v, p, fail));
  read('platform', (v, p) => readPlatform(v, p, fail));
  read('instance', (v, p) => readString(v, p, fail));
  read('work-dir', (v, p) => readNonEmptyString(v, p, fail));
  read('cache-size', (v, p) => readPositiveInteger(v, p, fail));
  read('name', (v, p) => readNonEmptyString(v, p, fail));
  read('image', (v, p) => readNonEmptyString(v, p, fail));
  read('health-port', (v, p) => readPort(v, p, fail));
  read('metrics-port', (v, p) => readPort(v, p, fail));
  read('drain-timeout', (v, p) => readInteger(v, p, 0, 24 * 3600, fail));
  read('storage', (v, p) => parseBlobAccessConfig(v as BlobAccessConfig, p));
  for (const key of SCHEDULER_CREDENTIAL_KEYS) read(key, (v, p) => readNonEmptyString(v, p, fail));
  return file;
}

function readPort(value: unknown, path: string, fail: ConfigFail): number {
  const port = readPositiveInteger(value, path, fail);
  return port > 65535 ? fail(path, `expected a port (1 to 65535), got ${port}`) : port;
}

function readPlatform(value: unknown, path: string, fail: ConfigFail): string[] {
  if (!Array.isArray(value)) return fail(path, `expected an array of "NAME=VALUE" strings, got ${JSON.stringify(value)}`);
  return value.map((item, i) => {
    const property = readString(item, fieldPath(path, i), fail);
    if (property.indexOf('=') <= 0) fail(fieldPath(path, i), `expected "NAME=VALUE", got ${JSON.stringify(property)}`);
    return property;
  });
}

/** The `executor` section of `kiln cluster up --config FILE`: limits and credentials of the executors it starts. */
export interface ClusterExecutorSection {
  /** The resource-limit keys, as written (parseResourceLimitPolicy checks their values, with the flags). */
  readonly limits: Readonly<Record<string, string | number>>;
  /** Absolute paths of `tls-ca`, `tls-certificate`, `tls-key`, `token-file` (relative ones are against `baseDir`). */
  readonly credentialFiles: Readonly<Partial<Record<(typeof SCHEDULER_CREDENTIAL_KEYS)[number], string>>>;
}

/** Reads the `executor` section (absent: nothing set); errors are ConfigErrors `executor.field: problem`. */
export function readClusterExecutorSection(value: unknown, baseDir: string): ClusterExecutorSection {
  if (value === undefined) return { limits: {}, credentialFiles: {} };
  const allowed = [...RESOURCE_LIMIT_KEYS, ...SCHEDULER_CREDENTIAL_KEYS];
  // The same keys as an executor's own file, read by the same code, under the section's path.
  const obj = readObject(value, 'executor', allowed, throwConfigError);
  const file = readExecutorConfigFile(obj, (path, problem) => throwConfigError(fieldPath('executor', path), problem));
  const credentialFiles: Partial<Record<(typeof SCHEDULER_CREDENTIAL_KEYS)[number], string>> = {};
  for (const key of SCHEDULER_CREDENTIAL_KEYS) if (file[key] !== undefined) credentialFiles[key] = resolve(baseDir, file[key]);
  return { limits: file.limits, credentialFiles };
}
