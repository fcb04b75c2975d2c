import { checkReprDepth, hashValue, repr } from './describe.js';
import { equals } from './equality.js';
import { StarObject, type ReprPath, type Value } from './value.js';

/**
 * An immutable record of named fields, as Bazel's `struct(a = 1)`: fields print in sorted order,
 * two structs are equal when their fields are, and a struct is hashable when its fields are.
 */
export class StarStruct extends StarObject {
  /** Field names, sorted, and their values in the same order. */
  readonly names: string[];
  readonly values: Value[];
  constructor(fields: Iterable<[string, Value]>) {
    super();
    const sorted = [...fields].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    this.names = sorted.map((f) => f[0]);
    this.values = sorted.map((f) => f[1]);
  }
  get type(): string {
    return 'struct';
  }
  override markFrozen(pending: Value[]): void {
    for (const v of this.values) pending.push(v);
  }
  override hash(): number {
    let h = 0;
    for (let i = 0; i < this.names.length; i++) h = (Math.imul(h, 31) + hashValue(this.names[i]!) + hashValue(this.values[i]!)) | 0;
    return h;
  }
  override attr(name: string): Value | undefined {
    const i = this.names.indexOf(name);
    return i < 0 ? undefined : this.values[i];
  }
  override attrNames(): string[] {
    return [...this.names];
  }
  override equals(other: StarObject, depth: number): boolean {
    const o = other as StarStruct;
    if (o.names.length !== this.names.length) return false;
    for (let i = 0; i < this.names.length; i++) {
      if (this.names[i] !== o.names[i] || !equals(this.values[i]!, o.values[i]!, depth)) return false;
    }
    return true;
  }
  repr(path: ReprPath): string {
    if (path.includes(this)) return 'struct(...)';
    checkReprDepth(path);
    path.push(this);
    const parts = this.names.map((n, i) => `${n} = ${repr(this.values[i]!, path)}`);
    path.pop();
    return `struct(${parts.join(', ')})`;
  }
}

/** A named, immutable namespace (`module(name, **kwargs)` of `--assert`, or a loaded module's view). */
export class StarModule extends StarObject {
  constructor(
    readonly name: string,
    readonly members: ReadonlyMap<string, Value>,
  ) {
    super();
  }
  get type(): string {
    return 'module';
  }
  override markFrozen(pending: Value[]): void {
    for (const v of this.members.values()) pending.push(v);
  }
  override attr(name: string): Value | undefined {
    return this.members.get(name);
  }
  override attrNames(): string[] {
    return [...this.members.keys()].sort();
  }
  repr(): string {
    return `<module "${this.name}">`;
  }
}
