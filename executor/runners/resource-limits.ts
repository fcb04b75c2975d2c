import { InvalidArgumentError } from '../../src/core/index.js';
import type { PlatformProperty } from './runner.js';

/** What one action may use; 0 means no limit. */
export interface ResourceLimits {
  /** Memory (RAM, no swap on top) in bytes. */
  readonly memoryBytes: number;
  /** Processes and threads at once. */
  readonly pids: number;
  /** CPUs' worth of time (fractions allowed). */
  readonly cpus: number;
}

/**
 * The operator's policy: `defaults` apply to every action; an action may ask for other limits through
 * the platform properties of ACTION_LIMIT_PROPERTIES, up to `ceilings` (a ceiling equal to the
 * default, the default policy, lets an action only lower its limit).
 */
export interface ResourceLimitPolicy {
  readonly defaults: ResourceLimits;
  readonly ceilings: ResourceLimits;
}

/**
 * Sized for one build action on a small machine: a compiler, linker or test with its helpers stays
 * well within them, a runaway fork loop or allocation does not.
 */
export const DEFAULT_RESOURCE_LIMITS: ResourceLimits = { memoryBytes: 1024 * 1024 * 1024, pids: 256, cpus: 2 };

/**
 * Platform properties an action sets to change its limits: Bazel Buildfarm's `max-mem` (bytes) and
 * `max-cores`, and `max-pids` named after them.
 */
export const ACTION_LIMIT_PROPERTIES = { memoryBytes: 'max-mem', cpus: 'max-cores', pids: 'max-pids' } as const;

/** Docker's smallest memory limit; cgroups take less, but nothing useful runs in less. */
const MIN_MEMORY_BYTES = 6 * 1024 * 1024;

/** The default policy, its CPU limit bounded by this machine's CPUs (Docker refuses more). */
export function defaultResourceLimitPolicy(hostCpus: number): ResourceLimitPolicy {
  const defaults = { ...DEFAULT_RESOURCE_LIMITS, cpus: Math.min(DEFAULT_RESOURCE_LIMITS.cpus, hostCpus) };
  return { defaults, ceilings: defaults };
}

/**
 * The limits of one action: the defaults, changed by the action's limit properties. A value that is
 * not a number, or above the operator's ceiling, is an InvalidArgumentError naming the property.
 */
export function limitsForAction(policy: ResourceLimitPolicy, platform: readonly PlatformProperty[]): ResourceLimits {
  const limits = { ...policy.defaults };
  for (const key of ['memoryBytes', 'pids', 'cpus'] as const) {
    const name = ACTION_LIMIT_PROPERTIES[key];
    const property = platform.find((p) => p.name === name);
    if (!property) continue;
    const asked = parseLimit(key, property.value);
    if (asked === undefined || asked === 0 || (key === 'memoryBytes' && asked < MIN_MEMORY_BYTES)) {
      throw new InvalidArgumentError(
        `platform property ${name}=${JSON.stringify(property.value)}: expected ${expectedForm(key)} above ${key === 'memoryBytes' ? '6m' : '0'}`,
      );
    }
    const ceiling = policy.ceilings[key];
    if (ceiling !== 0 && asked > ceiling) {
      throw new InvalidArgumentError(
        `platform property ${name}=${property.value} is above this executor's ceiling of ${formatLimit(key, ceiling)} (the operator raises it with ${CEILING_FLAGS[key]})`,
      );
    }
    limits[key] = asked;
  }
  return limits;
}

const CEILING_FLAGS = { memoryBytes: '--max-memory-limit', pids: '--max-pids-limit', cpus: '--max-cpu-limit' } as const;

function expectedForm(key: keyof ResourceLimits): string {
  return key === 'memoryBytes' ? 'bytes (a number, or with a k, m or g suffix)' : key === 'pids' ? 'an integer' : 'a number of CPUs';
}

/** A limit as its flag would take it (0: none). */
function formatLimit(key: keyof ResourceLimits, value: number): string {
  if (value === 0) return 'none';
  if (key !== 'memoryBytes') return String(value);
  for (const [suffix, scale] of [
    ['g', 1024 ** 3],
    ['m', 1024 ** 2],
    ['k', 1024],
  ] as const) {
    if (value % scale === 0) return `${value / scale}${suffix}`;
  }
  return String(value);
}

/** Bytes as Docker writes them: `1073741824`, `512m`, `1g`, `64k` (binary units; `b`/`ib` suffix allowed). */
export function parseByteSize(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(?:([kmgt])(?:i?b)?|b)?\s*$/i.exec(text);
  if (!m) return undefined;
  const scale = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }[(m[2] ?? '').toLowerCase()]!;
  const bytes = Math.floor(Number(m[1]) * scale);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

function parseLimit(key: keyof ResourceLimits, text: string): number | undefined {
  return key === 'memoryBytes' ? parseByteSize(text) : key === 'pids' ? parseCount(text) : parseCpus(text);
}

function parseCount(text: string): number | undefined {
  if (!/^\s*\d+\s*$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

function parseCpus(text: string): number | undefined {
  if (!/^\s*\d+(?:\.\d+)?\s*$/.test(text)) return undefined;
  const n = Number(text);
  // Docker's granularity: a hundredth of a CPU.
  return Math.round(n * 100) / 100;
}

/**
 * Reads a policy from flag or config values (strings from a command line, numbers or strings from
 * JSON). `fail(field, message)` reports a bad one; `field` is the key as given. An absent default
 * keeps `base`'s; an absent ceiling is the default (actions may only lower it); a ceiling never falls
 * below its default.
 */
export function parseResourceLimitPolicy(
  values: Readonly<Record<string, unknown>>,
  base: ResourceLimitPolicy,
  fail: (field: string, message: string) => never,
): ResourceLimitPolicy {
  const read = (field: string, key: keyof ResourceLimits, fallback: number): number => {
    const value = values[field];
    if (value === undefined) return fallback;
    const parsed = typeof value === 'number' || typeof value === 'string' ? parseLimit(key, String(value)) : undefined;
    if (parsed === undefined || (key === 'memoryBytes' && parsed !== 0 && parsed < MIN_MEMORY_BYTES)) {
      fail(field, `expected ${expectedForm(key)}${key === 'memoryBytes' ? ' of at least 6m' : ''} (0 for no limit), got ${JSON.stringify(value)}`);
    }
    return parsed;
  };
  const defaults: ResourceLimits = {
    memoryBytes: read('memory-limit', 'memoryBytes', base.defaults.memoryBytes),
    pids: read('pids-limit', 'pids', base.defaults.pids),
    cpus: read('cpu-limit', 'cpus', base.defaults.cpus),
  };
  const ceiling = (field: string, key: keyof ResourceLimits): number => {
    if (values[field] === undefined) return defaults[key];
    const given = read(field, key, 0);
    if (given !== 0 && (defaults[key] === 0 || given < defaults[key])) {
      fail(field, `the ceiling ${formatLimit(key, given)} is below the default limit ${formatLimit(key, defaults[key])}`);
    }
    return given;
  };
  return {
    defaults,
    ceilings: { memoryBytes: ceiling('max-memory-limit', 'memoryBytes'), pids: ceiling('max-pids-limit', 'pids'), cpus: ceiling('max-cpu-limit', 'cpus') },
  };
}

/** The keys parseResourceLimitPolicy reads (flags of `kiln executor` and `kiln cluster up`, config keys). */
export const RESOURCE_LIMIT_KEYS = ['memory-limit', 'pids-limit', 'cpu-limit', 'max-memory-limit', 'max-pids-limit', 'max-cpu-limit'] as const;

/** One line for the executor's start: `memory 1g, pids 256, CPUs 2 per action (actions may ask up to ...)`. */
export function describeResourceLimitPolicy(policy: ResourceLimitPolicy): string {
  const line = (limits: ResourceLimits) =>
    `memory ${formatLimit('memoryBytes', limits.memoryBytes)}, pids ${formatLimit('pids', limits.pids)}, CPUs ${formatLimit('cpus', limits.cpus)}`;
  const same = (['memoryBytes', 'pids', 'cpus'] as const).every((k) => policy.ceilings[k] === policy.defaults[k]);
  return `${line(policy.defaults)} per action${same ? '' : ` (max-mem, max-pids, max-cores may ask up to ${line(policy.ceilings)})`}`;
}
