import { StarlarkError } from '../starlark-error.js';

/**
 * A Starlark value. The common immutable kinds are JS primitives so the evaluator's hot paths need
 * no allocation: `string` is a Starlark string, `boolean` a bool, `number` an int within the safe
 * integer range and `bigint` an int outside it (never inside: ints are normalised). Every other
 * kind (None, float, bytes, list, ...) is a {@link StarObject}.
 */
export type Value = StarObject | string | number | bigint | boolean;

/** Tracks the containers being printed, so a list that contains itself prints as `[...]`. */
export type ReprPath = StarObject[];

/**
 * The small interface every non-primitive value shares (type, truth, hash, freeze, repr), plus
 * optional capabilities whose default implementations say "unsupported". Mirrors starlark-go's
 * Value interface and its optional Iterable, Indexable, HasAttrs... interfaces.
 */
export abstract class StarObject {
  abstract get type(): string;
  truth(): boolean {
    return true;
  }
  /** Hash consistent with {@link equals}; unhashable values throw. */
  hash(): number {
    throw new StarlarkError(`unhashable: ${this.type}`);
  }
  /**
   * Makes the value and everything reachable from it immutable. Idempotent. Iterative (an explicit
   * work list), so a value nested a million levels deep freezes without exhausting the JS stack.
   */
  freeze(): void {
    const pending: Value[] = [this];
    while (pending.length > 0) {
      const v = pending.pop()!;
      if (typeof v === 'object') v.markFrozen(pending);
    }
  }
  /** Marks this value frozen and pushes the values it references; does nothing when already frozen. */
  markFrozen(_pending: Value[]): void {}
  abstract repr(path: ReprPath): string;
  str(path: ReprPath): string {
    return this.repr(path);
  }
  /** Equality with a value of the same type; identity unless overridden. */
  equals(other: StarObject, _depth: number): boolean {
    return this === other;
  }
  /** Three-way comparison with a value of the same type, or undefined when the type is unordered. */
  compare(_other: StarObject, _depth: number): number | undefined {
    return undefined;
  }
  /** The elements, for iterable values (a snapshot or live view; callers lock mutable ones). */
  iterate(): Iterable<Value> | undefined {
    return undefined;
  }
  /** Length for sized values, or -1. */
  len(): number {
    return -1;
  }
  /** x.name: a field or a bound method, or undefined. */
  attr(_name: string): Value | undefined {
    return undefined;
  }
  attrNames(): string[] {
    return [];
  }
  /** The embedder's own wording for a missing field (Bazel's providers), or undefined for the default. */
  missingAttrMessage(_name: string): string | undefined {
    return undefined;
  }
  /**
   * `x op y` for operators the built-in types do not define (starlark-go's HasBinary): `side` says
   * whether this value is the left operand. Undefined means unsupported. Embedders use it for
   * values such as Bazel's `select()`, which supports `+` and `|` with lists and dicts.
   */
  binary(_op: string, _other: Value, _side: 'left' | 'right'): Value | undefined {
    return undefined;
  }
  /** Locks a mutable value against mutation while it is iterated; returns the unlock. */
  lockForIteration(): void {}
  unlockForIteration(): void {}
}

/** Values that support `x[i]` with integer indices and `x[i:j:k]`. */
export interface Sequence {
  len(): number;
  index(i: number): Value;
  slice(start: number, end: number, step: number): Value;
}

class NoneType extends StarObject {
  get type(): string {
    return 'NoneType';
  }
  override truth(): boolean {
    return false;
  }
  override hash(): number {
    return 0;
  }
  repr(): string {
    return 'None';
  }
}

export const None: StarObject = new NoneType();
