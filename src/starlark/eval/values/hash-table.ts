import { StarlarkError } from '../starlark-error.js';
import { equals } from './equality.js';
import { StarFloat } from './float.js';
import { MAX_ELEMENTS, tooManyElements } from './size-limit.js';
import { StarObject, type Value } from './value.js';

/**
 * The insertion-ordered table behind dict and set, keyed by Starlark equality (not JS identity).
 *
 * Keys are stored in a JS Map under a normalised key: strings, bools and ints are their own key
 * (ints are normalised, so equal ints are identical); a float is stored as the equal int when it
 * is integral (so `d[1.0]` finds `d[1]`); None and other hashable objects (tuples, bytes, ...) are
 * canonicalised through a hash-bucket index so that equal objects share one Map key.
 */
export class HashTable {
  /** normalised key -> value */
  readonly map = new Map<unknown, Value>();
  /** normalised key -> the key as inserted, only where they differ (float keys). */
  private originals: Map<unknown, Value> | undefined;
  /** Starlark hash -> canonical object keys with that hash. */
  private buckets: Map<number, StarObject[]> | undefined;
  frozen = false;
  itercount = 0;

  get size(): number {
    return this.map.size;
  }

  /** starlark-go's wording: `cannot insert into frozen hash table`. */
  checkMutable(verb: string): void {
    if (this.frozen) throw new StarlarkError(`cannot ${verb} frozen hash table`);
    if (this.itercount > 0) throw new StarlarkError(`cannot ${verb} hash table during iteration`);
  }

  /** The Map key for k, or undefined when no equal key is present and `insert` is false. */
  private normalize(k: Value, insert: boolean): unknown {
    switch (typeof k) {
      case 'string':
      case 'number':
      case 'bigint':
      case 'boolean':
        return k;
    }
    if (k instanceof StarFloat) {
      const f = k.value;
      if (Number.isInteger(f)) return Number.isSafeInteger(f) ? f + 0 : BigInt(f);
      return f;
    }
    const h = k.hash(); // throws for unhashable types
    let bucket = this.buckets?.get(h);
    if (bucket) for (const c of bucket) if (equals(c, k)) return c;
    if (!insert) return undefined;
    this.buckets ??= new Map();
    if (!bucket) this.buckets.set(h, (bucket = []));
    bucket.push(k);
    return k;
  }

  get(k: Value): Value | undefined {
    if (typeof k === 'string') return this.map.get(k);
    const n = this.normalize(k, false);
    return n === undefined ? undefined : this.map.get(n);
  }

  has(k: Value): boolean {
    return this.get(k) !== undefined;
  }

  set(k: Value, v: Value): void {
    this.checkMutable('insert into');
    if (typeof k === 'string') {
      if (this.map.size >= MAX_ELEMENTS && !this.map.has(k)) throw tooManyElements('hash table', this.map.size + 1);
      this.map.set(k, v);
      return;
    }
    const n = this.normalize(k, true);
    if (this.map.size >= MAX_ELEMENTS && !this.map.has(n)) throw tooManyElements('hash table', this.map.size + 1);
    if (n !== k && !this.map.has(n)) (this.originals ??= new Map()).set(n, k);
    this.map.set(n, v);
  }

  /** Removes k; returns its value or undefined. */
  delete(k: Value): Value | undefined {
    this.checkMutable('delete from');
    const n = typeof k === 'string' ? k : this.normalize(k, false);
    if (n === undefined) return undefined;
    const v = this.map.get(n);
    if (v === undefined) return undefined;
    this.map.delete(n);
    this.originals?.delete(n);
    if (n instanceof StarObject && this.buckets) {
      const h = n.hash();
      const bucket = this.buckets.get(h)!;
      bucket.splice(bucket.indexOf(n), 1);
      if (bucket.length === 0) this.buckets.delete(h);
    }
    return v;
  }

  clear(): void {
    this.checkMutable('clear');
    this.map.clear();
    this.originals = undefined;
    this.buckets = undefined;
  }

  /** The key as the user inserted it. */
  original(n: unknown): Value {
    return (this.originals?.get(n) ?? n) as Value;
  }

  keys(): Value[] {
    const out: Value[] = [];
    if (this.originals) for (const n of this.map.keys()) out.push(this.original(n));
    else for (const n of this.map.keys()) out.push(n as Value);
    return out;
  }

  values(): Value[] {
    return [...this.map.values()];
  }

  /** The first entry in insertion order. */
  first(): [Value, Value] | undefined {
    for (const [n, v] of this.map) return [this.original(n), v];
    return undefined;
  }

  markFrozen(pending: Value[]): void {
    if (this.frozen) return;
    this.frozen = true;
    for (const [n, v] of this.map) pending.push(this.original(n), v);
  }
}
