import { compare } from '../values/equality.js';
import { StarTuple } from '../values/list.js';
import type { Value } from '../values/value.js';
import { specialize } from '../specialize.js';

const RUN = 32;

/** Sorts safe integers natively (equal ints are indistinguishable, so stability is moot). */
export function sortInts(values: readonly number[], reverse: boolean): Value[] {
  const f = Float64Array.from(values).sort();
  const out: Value[] = new Array(f.length);
  if (reverse) for (let i = 0; i < f.length; i++) out[i] = f[f.length - 1 - i]!;
  else for (let i = 0; i < f.length; i++) out[i] = f[i]!;
  return out;
}

const strLess = (a: string, b: string): boolean => a < b;
const strGreater = (a: string, b: string): boolean => a > b;

/** Sorts strings by UTF-16 code units (Starlark's string order), stably. */
export function sortStrings(values: readonly string[], reverse: boolean): Value[] {
  return (reverse ? byStringReversed : byString)(values);
}

/**
 * `a < b` for tuples, with ints and strings compared inline element by element (sorting records
 * like `(count, name)` is common); other element types fall back to the general comparison.
 */
function tupleLess(a: Value, b: Value): boolean {
  const x = (a as StarTuple).elems;
  const y = (b as StarTuple).elems;
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const p = x[i]!;
    const q = y[i]!;
    if (p === q) continue;
    if (typeof p === 'number' && typeof q === 'number') return p < q;
    if (typeof p === 'string' && typeof q === 'string') return p < q;
    return compare(a, b) < 0;
  }
  return x.length < y.length;
}

function allTuples(a: readonly Value[]): boolean {
  for (let i = 0; i < a.length; i++) if (!(a[i] instanceof StarTuple)) return false;
  return true;
}

/**
 * A stable merge sort (insertion-sorted runs of RUN, then bottom-up merges) taking a strict
 * less-than `lt`, as source: it is instantiated once per fixed comparator (see sorterFor), because
 * V8's Array.prototype.sort, and any one sort function shared by many comparators, call the
 * comparator through a path that cannot inline it.
 */
const MERGE_SORT_SOURCE = `return function sort(input) {
  const n = input.length;
  let src = input.slice();
  if (n < 2) return src;
  for (let lo = 0; lo < n; lo += RUN) {
    const hi = Math.min(lo + RUN, n);
    for (let i = lo + 1; i < hi; i++) {
      const x = src[i];
      let j = i - 1;
      while (j >= lo && lt(x, src[j])) { src[j + 1] = src[j]; j--; }
      src[j + 1] = x;
    }
  }
  if (n <= RUN) return src;
  let dst = new Array(n);
  for (let w = RUN; w < n; w *= 2) {
    for (let lo = 0; lo < n; lo += 2 * w) {
      const mid = Math.min(lo + w, n), hi = Math.min(lo + 2 * w, n);
      let i = lo;
      if (mid >= hi || !lt(src[mid], src[mid - 1])) { for (; i < hi; i++) dst[i] = src[i]; continue; }
      let j = mid, k = lo;
      while (i < mid && j < hi) dst[k++] = lt(src[j], src[i]) ? src[j++] : src[i++];
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    const t = src; src = dst; dst = t;
  }
  return src;
};`;

/**
 * A copy of the merge sort with its comparator fixed, so the comparison inlines (a shared sort
 * function calling many comparators cannot). Keyed sorts compare indices into {@link sortKeys}.
 */
function sorterFor<T>(lt: (a: T, b: T) => boolean): (input: readonly T[]) => T[] {
  return specialize({ RUN, lt }, MERGE_SORT_SOURCE);
}

/** The keys of the keyed sort in progress (comparisons never run Starlark code, so no re-entry). */
let sortKeys: readonly Value[] = [];

const byScalarKey = sorterFor<number>((i, j) => (sortKeys[i] as number | string) < (sortKeys[j] as number | string));
const byScalarKeyReversed = sorterFor<number>((i, j) => (sortKeys[i] as number | string) > (sortKeys[j] as number | string));
const byTupleKey = sorterFor<number>((i, j) => tupleLess(sortKeys[i]!, sortKeys[j]!));
const byTupleKeyReversed = sorterFor<number>((i, j) => tupleLess(sortKeys[j]!, sortKeys[i]!));
const byString = sorterFor<string>(strLess);
const byStringReversed = sorterFor<string>(strGreater);
const byTuple = sorterFor<Value>(tupleLess);
const byTupleReversed = sorterFor<Value>((a, b) => tupleLess(b, a));
const byCompare = sorterFor<Value>((a, b) => compare(a, b) < 0);
const byCompareReversed = sorterFor<Value>((a, b) => compare(b, a) < 0);
const byCompareKey = sorterFor<number>((i, j) => compare(sortKeys[i]!, sortKeys[j]!) < 0);
const byCompareKeyReversed = sorterFor<number>((i, j) => compare(sortKeys[j]!, sortKeys[i]!) < 0);

/** Sorts values without a key: tuples inline, anything else by Starlark comparison. Stable. */
export function sortByValue(values: readonly Value[], reverse: boolean): Value[] {
  if (allTuples(values)) return (reverse ? byTupleReversed : byTuple)(values);
  return (reverse ? byCompareReversed : byCompare)(values);
}

/** Sorts values by precomputed keys (one per value, same order). Stable. */
export function sortByKeys(values: readonly Value[], keys: readonly Value[], reverse: boolean): Value[] {
  const order = keys.map((_, i) => i);
  let sorter: (input: readonly number[]) => number[];
  let scalar = true;
  for (let i = 0; i < keys.length && scalar; i++) scalar = typeof keys[i] === 'number';
  if (!scalar) {
    scalar = true;
    for (let i = 0; i < keys.length && scalar; i++) scalar = typeof keys[i] === 'string';
  }
  if (scalar) sorter = reverse ? byScalarKeyReversed : byScalarKey;
  else if (allTuples(keys)) sorter = reverse ? byTupleKeyReversed : byTupleKey;
  else sorter = reverse ? byCompareKeyReversed : byCompareKey;
  sortKeys = keys;
  try {
    return sorter(order).map((i) => values[i]!);
  } finally {
    sortKeys = [];
  }
}
