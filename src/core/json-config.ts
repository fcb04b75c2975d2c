import { KilnError } from './errors.js';

/** A mistake in a JSON config file; the message begins with the field's path, e.g. `storage.backend.maxBytes: expected ...`. */
export class ConfigError extends KilnError {}

/** Reports a problem with the field at `path`; never returns. */
export type ConfigFail = (path: string, problem: string) => never;

/** Throws a ConfigError `path: problem`. */
export const throwConfigError: ConfigFail = (path, problem) => {
  throw new ConfigError(`${path}: ${problem}`);
};

/** The path of `key` in the object at `parent` (`parent.key`), or of item `key` of an array (`parent[2]`). */
export function fieldPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent === '' ? key : `${parent}.${key}`;
}

/**
 * The object at `path`, with no fields but `allowed` (when given): a misspelt key is an error naming
 * it, never silently ignored.
 */
export function readObject(value: unknown, path: string, allowed?: readonly string[], fail: ConfigFail = throwConfigError): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(path, `expected an object, got ${describe(value)}`);
  const obj = value as Record<string, unknown>;
  if (allowed) {
    for (const key of Object.keys(obj)) {
      if (!allowed.includes(key)) fail(fieldPath(path, key), `unknown field (allowed: ${allowed.join(', ')})`);
    }
  }
  return obj;
}

/** An integer from `min` to `max` (both within 2^53). */
export function readInteger(value: unknown, path: string, min: number, max: number, fail: ConfigFail = throwConfigError): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    const range =
      max === Number.MAX_SAFE_INTEGER
        ? min === 1
          ? 'a positive integer'
          : min === 0
            ? 'a non-negative integer'
            : `an integer from ${min}`
        : `an integer from ${min} to ${max}`;
    return fail(path, `expected ${range}, got ${describe(value)}`);
  }
  return value;
}

export function readPositiveInteger(value: unknown, path: string, fail: ConfigFail = throwConfigError): number {
  return readInteger(value, path, 1, Number.MAX_SAFE_INTEGER, fail);
}

export function readNonNegativeInteger(value: unknown, path: string, fail: ConfigFail = throwConfigError): number {
  return readInteger(value, path, 0, Number.MAX_SAFE_INTEGER, fail);
}

export function readString(value: unknown, path: string, fail: ConfigFail = throwConfigError): string {
  if (typeof value !== 'string') return fail(path, `expected a string, got ${describe(value)}`);
  return value;
}

export function readNonEmptyString(value: unknown, path: string, fail: ConfigFail = throwConfigError): string {
  if (typeof value !== 'string' || value === '') return fail(path, `expected a non-empty string, got ${describe(value)}`);
  return value;
}

export function readBoolean(value: unknown, path: string, fail: ConfigFail = throwConfigError): boolean {
  if (typeof value !== 'boolean') return fail(path, `expected true or false, got ${describe(value)}`);
  return value;
}

/** One of `choices` (strings). */
export function readOneOf<T extends string>(value: unknown, path: string, choices: readonly T[], fail: ConfigFail = throwConfigError): T {
  if (typeof value !== 'string' || !(choices as readonly string[]).includes(value)) {
    return fail(path, `expected one of ${choices.map((c) => JSON.stringify(c)).join(', ')}, got ${describe(value)}`);
  }
  return value as T;
}

/** `value` as JSON, `undefined` as "nothing" (a missing field). */
function describe(value: unknown): string {
  return value === undefined ? 'nothing' : JSON.stringify(value);
}
