import { StarlarkError } from '../starlark-error.js';
import { intHash } from './int.js';
import { hashString, quoteString } from './string-repr.js';
import type { StarObject, ReprPath, Value } from './value.js';

/** The Starlark type name of any value (`type(x)`). */
export function typeName(v: Value): string {
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'number':
    case 'bigint':
      return 'int';
    case 'boolean':
      return 'bool';
    default:
      return v.type;
  }
}

export function truth(v: Value): boolean {
  switch (typeof v) {
    case 'string':
      return v.length > 0;
    case 'number':
      return v !== 0;
    case 'bigint':
      return true; // normalised: a bigint is never zero
    case 'boolean':
      return v;
    default:
      return v.truth();
  }
}

export function hashValue(v: Value): number {
  switch (typeof v) {
    case 'string':
      return hashString(v);
    case 'number':
    case 'bigint':
      return intHash(v);
    case 'boolean':
      return v ? 1231 : 1237; // as Java's Boolean.hashCode
    default:
      return v.hash();
  }
}

/** `repr(x)`: the Starlark source form of a value. */
export function repr(v: Value, path: ReprPath = []): string {
  switch (typeof v) {
    case 'string':
      return quoteString(v);
    case 'number':
    case 'bigint':
      return String(v);
    case 'boolean':
      return v ? 'True' : 'False';
    default:
      return v.repr(path);
  }
}

/** `str(x)`: like repr, except that a string is itself. */
export function str(v: Value, path: ReprPath = []): string {
  switch (typeof v) {
    case 'string':
      return v;
    case 'number':
    case 'bigint':
      return String(v);
    case 'boolean':
      return v ? 'True' : 'False';
    default:
      return v.str(path);
  }
}

/** Prints a container's elements, guarding against cycles (`[...]`). */
export function reprElements(self: StarObject, path: ReprPath, open: string, elems: readonly Value[], close: string): string {
  if (path.includes(self)) return `${open}...${close}`;
  checkReprDepth(path);
  path.push(self);
  let out = open;
  for (let i = 0; i < elems.length; i++) {
    if (i > 0) out += ', ';
    out += repr(elems[i]!, path);
  }
  path.pop();
  return out + close;
}

/** Deeper nesting than this fails cleanly instead of exhausting the JS stack. */
export const MAX_NESTING = 1000;

export function checkReprDepth(path: ReprPath): void {
  if (path.length >= MAX_NESTING) throw new StarlarkError('repr: maximum nesting depth exceeded');
}
