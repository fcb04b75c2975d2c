/**
 * The schema of one command option (build, query, the server roles' own): its type, default, short
 * form, whether it may repeat and how one command-line value is read. Values are converted once,
 * here, so matching and configurations compare converted values only.
 */

import { availableParallelism, totalmem } from 'node:os';

/** A converted option value. List options hold strings; `define` holds `KEY=VALUE` strings. */
export type OptionValue = string | boolean | number | readonly string[];

export type OptionType = 'string' | 'bool' | 'int' | 'duration' | 'list';

/**
 * How one occurrence of a list option becomes items: `whole` keeps `a,b` as one item (copt),
 * `comma` splits it into `a` and `b` (ios_multi_cpus, platforms), `assignment` requires
 * `KEY=VALUE` and keeps it as one item (define).
 */
export type ListConverter = 'whole' | 'comma' | 'assignment';

interface OptionBase {
  readonly name: string;
  /** A one-letter alias used as `-c opt`. */
  readonly abbrev?: string;
  readonly help: string;
  /**
   * Read by execution only (`--jobs`, strategies, caches): not part of any configuration, so
   * config_setting cannot match it and analysis results do not depend on it (as in Bazel, where
   * such options are not build options and leave the analysis cache alone).
   */
  readonly executionOnly?: boolean;
  /**
   * Accepted, as Bazel accepts it, but without effect in Kiln: setting it to anything but its
   * default is an error (`error`: ignoring it would build something other than asked) or a
   * warning (`warning`: rc files written for Bazel commonly set it and the build is still right).
   * `reason` completes "--name ...: <reason>". Implementing the option means removing the marker.
   */
  readonly notImplemented?: { readonly severity: 'error' | 'warning'; readonly reason: string };
}

export interface StringOptionDefinition extends OptionBase {
  readonly type: 'string';
  readonly default: string;
  /** When present, the only values accepted; `describe` names them in the error. */
  readonly allowed?: { readonly values: readonly string[]; readonly describe: string };
  /**
   * Bazel's tri-state (`auto`, `yes`, `no`): `--name` alone means yes, `--noname` means no, and
   * yes/true/1 and no/false/0 are stored as `yes` and `no`.
   */
  readonly triState?: boolean;
}

export interface BoolOptionDefinition extends OptionBase {
  readonly type: 'bool';
  readonly default: boolean;
}

export interface IntOptionDefinition extends OptionBase {
  readonly type: 'int';
  readonly default: number;
  /** Words accepted besides integers and what they mean (`--jobs=auto`). */
  readonly keywords?: Readonly<Record<string, number>>;
  /** The smallest value accepted (keywords aside). */
  readonly min?: number;
  /** The largest value accepted. */
  readonly max?: number;
  /**
   * Bazel's resource form: `auto`, `HOST_CPUS` or `HOST_RAM` (MB), optionally followed by
   * `*<float>` or `-<float>` (`HOST_CPUS*.5`), as `--jobs` takes it.
   */
  readonly hostResources?: boolean;
}

/**
 * A length of time, held in milliseconds: Bazel's RemoteDurationConverter (`--remote_timeout`):
 * `<n>d`, `<n>h`, `<n>m`, `<n>s` or `<n>ms`, and a bare number of seconds.
 */
export interface DurationOptionDefinition extends OptionBase {
  readonly type: 'duration';
  /** Milliseconds. */
  readonly default: number;
}

export interface ListOptionDefinition extends OptionBase {
  readonly type: 'list';
  readonly default: readonly string[];
  /** A repeatable option accumulates its occurrences; a non-repeatable one keeps the last. */
  readonly allowMultiple: boolean;
  readonly converter: ListConverter;
}

export type OptionDefinition = StringOptionDefinition | BoolOptionDefinition | IntOptionDefinition | DurationOptionDefinition | ListOptionDefinition;

/** A value that does not fit the option; the caller adds Bazel's `While parsing option` prefix. */
export class OptionValueError extends Error {}

const TRUE_WORDS = new Set(['true', 'yes', '1']);
const FALSE_WORDS = new Set(['false', 'no', '0']);

/** Bazel's BooleanConverter: true/yes/1 and false/no/0, case-insensitively. */
export function convertBool(text: string): boolean {
  const lower = text.toLowerCase();
  if (TRUE_WORDS.has(lower)) return true;
  if (FALSE_WORDS.has(lower)) return false;
  throw new OptionValueError(`'${text}' is not a boolean`);
}

/**
 * Converts one occurrence's text. For list options the result is the items this occurrence adds
 * (one item for `whole` and `assignment`, any number for `comma`).
 */
export function convertOccurrence(def: OptionDefinition, text: string): OptionValue {
  switch (def.type) {
    case 'string':
      if (def.triState) {
        const lower = text.toLowerCase();
        if (lower === 'auto') return 'auto';
        if (TRUE_WORDS.has(lower)) return 'yes';
        if (FALSE_WORDS.has(lower)) return 'no';
        throw new OptionValueError(`'${text}' is not one of 'auto', 'yes', 'no'`);
      }
      if (def.allowed && !def.allowed.values.includes(text)) {
        throw new OptionValueError(`Not a valid ${def.allowed.describe}: '${text}' (should be ${joinChoices(def.allowed.values)})`);
      }
      return text;
    case 'bool':
      return convertBool(text);
    case 'int': {
      const keyword = def.keywords?.[text];
      if (keyword !== undefined) return keyword;
      const n = def.hostResources ? convertHostResources(text) : convertInt(text);
      // Bazel's RangeConverter wording, with its parentheses.
      if (def.min !== undefined && n < def.min) throw new OptionValueError(`Value '(${n})' must be at least ${def.min}.`);
      if (def.max !== undefined && n > def.max) throw new OptionValueError(`Value '(${n})' must be at most ${def.max}.`);
      return n;
    }
    case 'duration':
      return convertDuration(text);
    case 'list':
      switch (def.converter) {
        case 'whole':
          return [text];
        case 'comma':
          // Bazel's CommaSeparatedOptionListConverter: an empty value adds nothing.
          return text === '' ? [] : text.split(',');
        case 'assignment':
          if (text.indexOf('=') <= 0) throw new OptionValueError("Variable definitions must be in the form of a 'name=value' assignment");
          return [text];
      }
  }
}

function convertInt(text: string): number {
  if (!/^[+-]?\d+$/.test(text.trim())) throw new OptionValueError(`'${text}' is not an int`);
  const n = Number(text.trim());
  if (!Number.isSafeInteger(n) || n > 2147483647 || n < -2147483648) throw new OptionValueError(`'${text}' is not an int`);
  return n;
}

const DURATION = /^([0-9]+)(d|h|m|s|ms)$/;
const UNIT_MS: Readonly<Record<string, number>> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

/** Bazel's RemoteDurationConverter: a bare number is seconds, else DurationConverter's `<n>(d|h|m|s|ms)`; in milliseconds. */
function convertDuration(text: string): number {
  const match = DURATION.exec(/^[0-9]+$/.test(text) ? `${text}s` : text);
  const ms = match ? Number(match[1]) * UNIT_MS[match[2]!]! : NaN;
  if (!Number.isSafeInteger(ms)) throw new OptionValueError(`Illegal duration '${text}'.`);
  return ms;
}

/** A duration in the largest unit that states it exactly (`60s`, `100ms`), as a flag would be written. */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) if (ms > 0 && ms % UNIT_MS[unit]! === 0) return `${ms / UNIT_MS[unit]!}${unit}`;
  return `${ms}ms`;
}

/** `8`, `auto`, `HOST_CPUS*.5`, `HOST_RAM-1000`: Bazel's ResourceConverter, rounded to an int. */
function convertHostResources(text: string): number {
  if (/^[+-]?\d+$/.test(text.trim())) return convertInt(text);
  const match = /^(auto|HOST_CPUS|HOST_RAM)(?:([-*])(\d*\.?\d+))?$/.exec(text);
  if (!match) {
    throw new OptionValueError(
      `Parameter '${text}' does not follow correct syntax. This flag takes an integer, or a keyword ("auto", "HOST_CPUS", "HOST_RAM"), ` +
        'optionally followed by an operation ([-|*]<float>) eg. "auto", "HOST_CPUS*.5".',
    );
  }
  const base = match[1] === 'HOST_RAM' ? totalmem() / (1024 * 1024) : availableParallelism();
  const operand = match[3] === undefined ? undefined : Number(match[3]);
  const value = operand === undefined ? base : match[2] === '*' ? base * operand : base - operand;
  return Math.round(value);
}

function joinChoices(values: readonly string[]): string {
  if (values.length <= 1) return values.join('');
  return `${values.slice(0, -1).join(', ')} or ${values[values.length - 1]}`;
}

/** Equal option values: lists item by item. */
export function sameOptionValue(a: OptionValue, b: OptionValue): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => x === b[i]);
  return a === b;
}
