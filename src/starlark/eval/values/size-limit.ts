import { StarlarkError } from '../starlark-error.js';

/**
 * The most elements a list, tuple, dict or set may hold: 16,777,216. Far above what real BUILD and
 * .bzl files build (the largest generated packages hold a few million targets), and below what V8
 * survives: an array past about 1.1e8 elements aborts the process ("invalid array length"), and a
 * JS Map holds at most 2^24 entries. Strings are bounded by V8's own clean RangeError instead.
 */
export const MAX_ELEMENTS = 1 << 24;

/** Fails when a `kind` would hold `size` elements, more than MAX_ELEMENTS. */
export function checkSize(kind: string, size: number): void {
  if (size > MAX_ELEMENTS) throw tooManyElements(kind, size);
}

export function tooManyElements(kind: string, size: number): StarlarkError {
  return new StarlarkError(`excessive ${kind} size (${size} elements, at most ${MAX_ELEMENTS})`);
}
