import { StarlarkError } from '../starlark-error.js';
import { hashValue, reprElements } from './describe.js';
import { compare, equals } from './equality.js';
import { StarObject, type ReprPath, type Sequence, type Value } from './value.js';

/** A mutable list. `elems` is exposed for the evaluator's fast paths; mutate only after {@link checkMutable}. */
export class StarList extends StarObject implements Sequence {
  frozen = false;
  /** Number of active iterations; while positive the list cannot be mutated. */
  itercount = 0;
  constructor(public elems: Value[]) {
    super();
  }
  get type(): string {
    return 'list';
  }
  override truth(): boolean {
    return this.elems.length > 0;
  }
  override markFrozen(pending: Value[]): void {
    if (this.frozen) return;
    this.frozen = true;
    for (const e of this.elems) pending.push(e);
  }
  /** starlark-go's wording: `cannot append to frozen list`, `cannot clear list during iteration`. */
  checkMutable(verb: string): void {
    if (this.frozen) throw new StarlarkError(`cannot ${verb} frozen list`);
    if (this.itercount > 0) throw new StarlarkError(`cannot ${verb} list during iteration`);
  }
  override hash(): number {
    throw new StarlarkError('unhashable type: list');
  }
  override len(): number {
    return this.elems.length;
  }
  index(i: number): Value {
    return this.elems[i]!;
  }
  slice(start: number, end: number, step: number): Value {
    return new StarList(sliceArray(this.elems, start, end, step));
  }
  override iterate(): Iterable<Value> {
    return this.elems;
  }
  override lockForIteration(): void {
    if (!this.frozen) this.itercount++;
  }
  override unlockForIteration(): void {
    if (!this.frozen) this.itercount--;
  }
  override equals(other: StarObject, depth: number): boolean {
    return sequencesEqual(this.elems, (other as StarList).elems, depth);
  }
  override compare(other: StarObject, depth: number): number {
    return compareSequences(this.elems, (other as StarList).elems, depth);
  }
  repr(path: ReprPath): string {
    return reprElements(this, path, '[', this.elems, ']');
  }
}

/** An immutable tuple. */
export class StarTuple extends StarObject implements Sequence {
  constructor(readonly elems: readonly Value[]) {
    super();
  }
  get type(): string {
    return 'tuple';
  }
  override truth(): boolean {
    return this.elems.length > 0;
  }
  private frozen = false;
  override markFrozen(pending: Value[]): void {
    if (this.frozen) return;
    this.frozen = true;
    for (const e of this.elems) pending.push(e);
  }
  override hash(): number {
    // Python's tuple hash, as starlark-go.
    let x = 0x345678;
    let mult = 1000003;
    for (const e of this.elems) {
      const y = hashValue(e);
      x = (x ^ Math.imul(y, mult)) | 0;
      mult = (mult + 82520 + this.elems.length + this.elems.length) | 0;
    }
    return x;
  }
  override len(): number {
    return this.elems.length;
  }
  index(i: number): Value {
    return this.elems[i]!;
  }
  slice(start: number, end: number, step: number): Value {
    return new StarTuple(sliceArray(this.elems, start, end, step));
  }
  override iterate(): Iterable<Value> {
    return this.elems;
  }
  override equals(other: StarObject, depth: number): boolean {
    return sequencesEqual(this.elems, (other as StarTuple).elems, depth);
  }
  override compare(other: StarObject, depth: number): number {
    return compareSequences(this.elems, (other as StarTuple).elems, depth);
  }
  repr(path: ReprPath): string {
    if (this.elems.length === 1) return reprElements(this, path, '(', this.elems, ',)');
    return reprElements(this, path, '(', this.elems, ')');
  }
}

export const EMPTY_TUPLE = new StarTuple([]);

function sliceArray<T>(a: readonly T[], start: number, end: number, step: number): T[] {
  if (step === 1) return a.slice(start, Math.max(start, end));
  const out: T[] = [];
  if (step > 0) for (let i = start; i < end; i += step) out.push(a[i]!);
  else for (let i = start; i > end; i += step) out.push(a[i]!);
  return out;
}

function sequencesEqual(a: readonly Value[], b: readonly Value[], depth: number): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!equals(a[i]!, b[i]!, depth)) return false;
  return true;
}

function compareSequences(a: readonly Value[], b: readonly Value[], depth: number): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (!equals(a[i]!, b[i]!, depth)) return compare(a[i]!, b[i]!, '<', depth);
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}
