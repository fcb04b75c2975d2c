import { StarlarkError } from './starlark-error.js';
import type { Kwargs } from './values/callable.js';
import { typeName } from './values/describe.js';
import { quoteString } from './values/string-repr.js';
import { nearestName } from '../resolve/nearest-name.js';
import { None, type Value } from './values/value.js';

/**
 * Binds a builtin's arguments to its parameters, like starlark-go's UnpackArgs, so that every
 * argument error reads the same. `params` names the parameters in order; a trailing `?` marks an
 * optional one (all after it are optional too). Missing optional arguments are `undefined`.
 */
export function unpackArgs(fn: string, args: Value[], kwargs: Kwargs | null, params: readonly string[]): (Value | undefined)[] {
  const n = params.length;
  if (args.length > n) throw new StarlarkError(`${fn}: got ${args.length} arguments, want at most ${n}`);
  if (kwargs === null) {
    // Positional only (the common case): the arguments array itself is the result.
    // Optional parameters follow the mandatory ones: the first one not given decides.
    const next = params[args.length];
    if (next !== undefined && !next.endsWith('?')) throw new StarlarkError(`${fn}: missing argument for ${next}`);
    return args;
  }
  const out: (Value | undefined)[] = new Array(n);
  for (let i = 0; i < args.length; i++) out[i] = args[i];
  if (kwargs) {
    for (const [name, v] of kwargs) {
      // `name` or `name?`, compared without slicing (builtins with many keywords are called in loops).
      const i = params.findIndex((p) => p === name || (p.length === name.length + 1 && p.charCodeAt(name.length) === 63 && p.startsWith(name)));
      if (i < 0) {
        const hint = nearestName(
          name,
          params.map((p) => (p.endsWith('?') ? p.slice(0, -1) : p)),
        );
        throw new StarlarkError(`${fn}: unexpected keyword argument ${quoteString(name)}${hint ? ` (did you mean ${hint}?)` : ''}`);
      }
      if (out[i] !== undefined) throw new StarlarkError(`${fn}: got multiple values for keyword argument ${quoteString(name)}`);
      out[i] = v;
    }
  }
  for (let i = 0; i < n; i++) {
    const p = params[i]!;
    if (p.endsWith('?')) break;
    if (out[i] === undefined) throw new StarlarkError(`${fn}: missing argument for ${p}`);
  }
  return out;
}

/** For builtins that take only positional arguments: checks the count, as UnpackPositionalArgs. */
export function positionalArgs(fn: string, args: Value[], kwargs: Kwargs | null, min: number, max: number): void {
  if (kwargs && kwargs.length > 0) throw new StarlarkError(`${fn}: unexpected keyword arguments`);
  if (args.length < min) {
    throw new StarlarkError(`${fn}: got ${args.length} arguments, want ${min === max ? '' : 'at least '}${min}`);
  }
  if (args.length > max) {
    throw new StarlarkError(`${fn}: got ${args.length} arguments, want ${min === max ? '' : 'at most '}${max}`);
  }
}

/** The parameter label used in messages: a name, or a 1-based position for positional-only builtins. */
type ParamLabel = string | number;

function bad(fn: string, param: ParamLabel, v: Value, want: string): never {
  throw new StarlarkError(`${fn}: for parameter ${param}: got ${typeName(v)}, want ${want}`);
}

export function wantString(fn: string, param: ParamLabel, v: Value): string {
  if (typeof v !== 'string') bad(fn, param, v, 'string');
  return v;
}

/** An int argument that must fit in a JS number (indices, counts). */
export function wantSmallInt(fn: string, param: ParamLabel, v: Value): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') throw new StarlarkError(`${fn}: for parameter ${param}: ${v} out of range`);
  bad(fn, param, v, 'int');
}

export function wantBool(fn: string, param: ParamLabel, v: Value): boolean {
  if (typeof v !== 'boolean') bad(fn, param, v, 'bool');
  return v;
}

/** An optional int-or-None index argument (as in str.find's start/end). */
export function wantOptionalIndex(fn: string, param: ParamLabel, v: Value | undefined): number | undefined {
  if (v === undefined || v === None) return undefined;
  if (typeof v === 'bigint') return v < 0n ? -Number.MAX_SAFE_INTEGER : Number.MAX_SAFE_INTEGER;
  if (typeof v !== 'number') bad(fn, param, v, 'int or None');
  return v;
}
