import { StarlarkError } from '../starlark-error.js';
import { checkReprDepth, repr } from './describe.js';
import { equals } from './equality.js';
import { HashTable } from './hash-table.js';
import { StarObject, type ReprPath, type Value } from './value.js';

/** A mutable, insertion-ordered dict. */
export class StarDict extends StarObject {
  readonly table = new HashTable();
  get type(): string {
    return 'dict';
  }
  override truth(): boolean {
    return this.table.size > 0;
  }
  override markFrozen(pending: Value[]): void {
    this.table.markFrozen(pending);
  }
  override hash(): number {
    throw new StarlarkError('unhashable type: dict');
  }
  get frozen(): boolean {
    return this.table.frozen;
  }
  override len(): number {
    return this.table.size;
  }
  get(k: Value): Value | undefined {
    return this.table.get(k);
  }
  set(k: Value, v: Value): void {
    this.table.set(k, v);
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
  override equals(other: StarObject, depth: number): boolean {
    const o = (other as StarDict).table;
    if (o.size !== this.table.size) return false;
    for (const [n, v] of this.table.map) {
      const w = o.get(this.table.original(n));
      if (w === undefined || !equals(v, w, depth)) return false;
    }
    return true;
  }
  repr(path: ReprPath): string {
    if (path.includes(this)) return '{...}';
    checkReprDepth(path);
    path.push(this);
    let out = '{';
    let first = true;
    for (const [n, v] of this.table.map) {
      if (!first) out += ', ';
      first = false;
      out += `${repr(this.table.original(n), path)}: ${repr(v, path)}`;
    }
    path.pop();
    return `${out}}`;
  }
}
