import { StarlarkError } from '../starlark-error.js';
import { reprElements } from './describe.js';
import { HashTable } from './hash-table.js';
import { StarObject, type ReprPath, type Value } from './value.js';

/** The spec's mutable set: insertion-ordered unique hashable elements. */
export class StarSet extends StarObject {
  readonly table = new HashTable();
  get type(): string {
    return 'set';
  }
  override truth(): boolean {
    return this.table.size > 0;
  }
  override markFrozen(pending: Value[]): void {
    this.table.markFrozen(pending);
  }
  override hash(): number {
    throw new StarlarkError('unhashable type: set');
  }
  override len(): number {
    return this.table.size;
  }
  has(v: Value): boolean {
    return this.table.has(v);
  }
  add(v: Value): void {
    this.table.set(v, true);
  }
  elements(): Value[] {
    return this.table.keys();
  }
  override iterate(): Iterable<Value> {
    return this.table.keys();
  }
  override lockForIteration(): void {
    if (!this.table.frozen) this.table.itercount++;
  }
  override unlockForIteration(): void {
    if (!this.table.frozen) this.table.itercount--;
  }
  override equals(other: StarObject): boolean {
    const o = other as StarSet;
    if (o.table.size !== this.table.size) return false;
    for (const k of this.table.keys()) if (!o.table.has(k)) return false;
    return true;
  }
  isSubsetOf(o: StarSet): boolean {
    if (this.table.size > o.table.size) return false;
    for (const k of this.table.keys()) if (!o.table.has(k)) return false;
    return true;
  }
  repr(path: ReprPath): string {
    return reprElements(this, path, 'set([', this.elements(), '])');
  }
}
