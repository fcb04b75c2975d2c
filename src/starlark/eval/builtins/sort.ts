import { compare } from '../values/equality.js';
import { StarTuple } from '../values/list.js';
import type { Value } from '../values/value.js';

const RUN = 32;

/**
 * A stable merge sort (insertion-sorted runs, then bottom-up merges) taking a strict less-than.
 * V8's Array.prototype.sort calls its comparator through a generic path that is several times
 * slower than this on large arrays of strings or keyed records, and `sorted` is a hot builtin.
 */
export function mergeSort<T>(input: readonly T[], lt: (a: T, b: T) => boolean): T[] {
  const n = input.length;
  let src = input.slice();
  if (n < 2) return src;
  for (let lo = 0; lo < n; lo += RUN) {
    const hi = Math.min(lo + RUN, n);
    for (let i = lo + 1; i < hi; i++) {
      const x = src[i]!;
      let j = i - 1;
      while (j >= lo && lt(x, src[j]!)) {
        src[j + 1] = src[j]!;
        j--;
      }
      src[j + 1] = x;
    }
  }
  if (n <= RUN) return src;
  let dst: T[] = new Array(n);
  for (let w = RUN; w < n; w *= 2) {
    for (let lo = 0; lo < n; lo += 2 * w) {
      const mid = Math.min(lo + w, n);
      const hi = Math.min(lo + 2 * w, n);
      let i = lo;
      if (mid >= hi || !lt(src[mid]!, src[mid - 1]!)) {
        for (; i < hi; i++) dst[i] = src[i]!; // already in order
        continue;
      }
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) dst[k++] = lt(src[j]!, src[i]!) ? src[j++]! : src[i++]!;
      while (i < mid) dst[k++] = src[i++]!;
      while (j < hi) dst[k++] = src[j++]!;
    }
    const t = src;
    src = dst;
    dst = t;
  }
  return src;
}

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
  return mergeSort(values, reverse ? strGreater : strLess);
}

/**
 * `a < b` for tuples, with ints and strings compared inline element by element (sorting records
 * like `(count, name)` is common); other element types fall back to the general comparison.
 */
export function tupleLess(a: Value, b: Value): boolean {
  const x = (a as StarTuple).elems;
  const y = (b as StarTuple).elems;
  const n = x.length < y.length ? x.length : y.length;
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

export function allTuples(a: readonly Value[]): boolean {
  for (let i = 0; i < a.length; i++) if (!(a[i] instanceof StarTuple)) return false;
  return true;
}
