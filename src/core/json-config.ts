import { KilnError } from './errors.js';

/** A mistake in a JSON config file; the message begins with the field's path, e.g. `storage.backend.maxBytes: expected ...`. */
export class ConfigError extends KilnError {}

/** Reports a problem with the field at `path`; never returns. */
export type ConfigFail = (path: string, problem: string) => never;

/** Throws a ConfigError `path: problem`. */
export const throwConfigError: ConfigFail = (path, problem) => {
  throw new ConfigError(path === '' ? problem : `${path}: ${problem}`);
};

/**
 * Runs a section parser on the config file `file`: every ConfigError it throws (`path: problem`) is
 * thrown again as `file: path: problem`, so the file is named in one place, whatever the section.
 */
export function inConfigFile<T>(file: string, parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    if (e instanceof ConfigError) throw new ConfigError(`${file}: ${e.message}`);
    throw e;
  }
}

/**
 * Parses the JSON text of config file `file` and runs a section parser on it (through inConfigFile).
 * A syntax error is a ConfigError `file:LINE:COL: not valid JSON: ...`.
 */
export function parseConfigText<T>(text: string, file: string, parse: (value: unknown) => T): T {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (e) {
    const { line, col } = lineAndColumn(text, jsonErrorOffset(text, (e as Error).message));
    throw new ConfigError(`${file}:${line}:${col}: not valid JSON: ${(e as Error).message}`);
  }
  return inConfigFile(file, () => parse(value));
}

/**
 * Where JSON.parse stopped. V8 says `at position N` for most errors; for an unexpected token it quotes
 * the text around it instead (`..."ten chars" + token + "ten chars"...`, or all of a short text).
 */
function jsonErrorOffset(text: string, message: string): number {
  const at = /at position (\d+)/.exec(message);
  if (at) return Number(at[1]);
  const token = /^Unexpected token '(.)', (\.\.\.)?"(.*)"(?:\.\.\.)? is not valid JSON$/s.exec(message);
  if (!token) return text.length;
  const [, char, cutBefore, quoted] = token as unknown as [string, string, string | undefined, string];
  const from = text.indexOf(quoted);
  if (from < 0) return text.length;
  // With text cut before it, the token follows exactly V8's ten characters of context.
  if (cutBefore) return from + 10;
  return from + firstOutsideStrings(quoted, char);
}

/** The index of the first `char` of `text` outside JSON strings (the text's length when none). */
function firstOutsideStrings(text: string, char: string): number {
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === char) return i;
    else if (c === '"') inString = true;
  }
  return text.length;
}

/** 1-based line and column of `offset` in `text`. */
function lineAndColumn(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset);
  const lines = before.split('\n');
  return { line: lines.length, col: lines.at(-1)!.length + 1 };
}

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
