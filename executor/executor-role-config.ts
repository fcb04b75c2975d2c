import { availableParallelism, hostname } from 'node:os';
import { resolve } from 'node:path';
import { UsageError } from '../src/core/index.js';
import { DEFAULT_CACHE_BYTES, type ExecutorConfig } from './executor-config.js';
import { SCHEDULER_CREDENTIAL_KEYS, type ExecutorConfigFile, type ExecutorConfigKey } from './executor-config-file.js';
import { defaultResourceLimitPolicy, parseResourceLimitPolicy, RESOURCE_LIMIT_KEYS } from './runners/resource-limits.js';
import { readTokenFile, type SchedulerCredentials } from './scheduler-connection.js';

type Key = ExecutorConfigKey;

/** What `kiln executor` was given: its flags (by name, every value given), its config file, and where it runs. */
export interface ExecutorRoleInputs {
  readonly flags: ReadonlyMap<string, readonly string[]>;
  readonly file: ExecutorConfigFile;
  /** The config file's name as given, for errors about its values. */
  readonly fileName?: string;
  readonly cwd: string;
  readonly defaultWorkDirectory: string;
  readonly dockerHost?: string;
}

/**
 * The executor's config: each key from its flag (the last given) or else the file, else its default.
 * A value that is wrong only together with the others (a limit, a missing scheduler) is a UsageError
 * naming its flag, or the file and the key (readExecutorConfigFile checked each file value's type).
 */
export function resolveExecutorConfig(inputs: ExecutorRoleInputs): ExecutorConfig {
  const { flags, file } = inputs;
  const fileValue = (flag: Key): unknown => {
    if ((RESOURCE_LIMIT_KEYS as readonly string[]).includes(flag)) return file.limits[flag];
    return file[flag as Exclude<keyof ExecutorConfigFile, 'limits'>];
  };
  const pick = (flag: Key): unknown => flags.get(flag)?.at(-1) ?? fileValue(flag);
  const scheduler = pick('scheduler');
  if (typeof scheduler !== 'string' || scheduler === '') throw new UsageError('--scheduler is required (the endpoint kiln scheduler printed)');
  const runner = pick('runner') ?? 'local';
  if (runner !== 'local' && runner !== 'docker') throw new UsageError(`--runner: expected local or docker, got '${String(runner)}'`);
  const platformValues = flags.get('platform') ?? file.platform ?? [];
  const platform = platformValues.map((p) => {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new UsageError(`--platform: expected NAME=VALUE, got '${p}'`);
    return { name: p.slice(0, eq), value: p.slice(eq + 1) };
  });
  const limitValues: Record<string, unknown> = {};
  for (const key of RESOURCE_LIMIT_KEYS) if (pick(key) !== undefined) limitValues[key] = pick(key);
  const limits = parseResourceLimitPolicy(limitValues, defaultResourceLimitPolicy(availableParallelism()), (field, message) => {
    throw new UsageError(flags.has(field) ? `--${field}: ${message}` : `${inputs.fileName}: ${field}: ${message}`);
  });
  const name = String(pick('name') ?? hostname());
  const path = (flag: Key) => (pick(flag) === undefined ? undefined : resolve(inputs.cwd, String(pick(flag))));
  const credentials = schedulerCredentialsOf(Object.fromEntries(SCHEDULER_CREDENTIAL_KEYS.map((key) => [key, path(key)])));
  const workDir = pick('work-dir');
  return {
    scheduler,
    credentials,
    instanceName: String(pick('instance') ?? ''),
    name,
    slots: pick('slots') === undefined ? availableParallelism() : integer('slots', pick('slots'), 1),
    runner,
    workDirectory: workDir === undefined ? inputs.defaultWorkDirectory : resolve(inputs.cwd, String(workDir)),
    cacheBytes: pick('cache-size') === undefined ? DEFAULT_CACHE_BYTES : integer('cache-size', pick('cache-size'), 1),
    limits,
    platform,
    ...(inputs.dockerHost ? { dockerHost: inputs.dockerHost } : {}),
    ...(pick('image') === undefined ? {} : { defaultImage: String(pick('image')) }),
    ...(pick('health-port') === undefined ? {} : { healthPort: port('health-port', pick('health-port')) }),
    ...(pick('metrics-port') === undefined ? {} : { metricsPort: port('metrics-port', pick('metrics-port')) }),
    ...(pick('drain-timeout') === undefined ? {} : { drainTimeoutMs: integer('drain-timeout', pick('drain-timeout'), 0) * 1000 }),
    ...(file.storage ? { storage: file.storage } : {}),
  };
}

function port(flag: string, value: unknown): number {
  const n = integer(flag, value, 1);
  if (n > 65535) throw new UsageError(`--${flag}: expected a port (1 to 65535), got ${n}`);
  return n;
}

function integer(flag: string, value: unknown, min: number): number {
  const n = typeof value === 'number' ? value : /^\d+$/.test(String(value)) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`--${flag}: expected an integer of at least ${min}, got '${String(value)}'`);
  return n;
}

/** The credentials of the files `tls-ca`, `tls-certificate`, `tls-key` (paths) and `token-file` (read here). */
export function schedulerCredentialsOf(files: Readonly<Partial<Record<(typeof SCHEDULER_CREDENTIAL_KEYS)[number], string>>>): SchedulerCredentials {
  const tokenFile = files['token-file'];
  return {
    ...(files['tls-ca'] ? { tlsCa: files['tls-ca'] } : {}),
    ...(files['tls-certificate'] ? { tlsCertificate: files['tls-certificate'] } : {}),
    ...(files['tls-key'] ? { tlsKey: files['tls-key'] } : {}),
    ...(tokenFile ? { token: readTokenFile(tokenFile) } : {}),
  };
}
