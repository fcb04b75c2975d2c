import { StarlarkError } from '../starlark-error.js';
import type { Thread } from '../thread.js';
import { StarObject, type Value } from './value.js';

/** Keyword arguments of a call, in call order: name, value pairs. */
export type Kwargs = [string, Value][];

let nextIdentity = 1;

/** Anything that can be called: Starlark functions and builtins. Hashable by identity. */
export abstract class StarCallable extends StarObject {
  private identity = 0;
  abstract get name(): string;
  /**
   * Calls the value. `args` must be a fresh array that the caller does not use afterwards: a
   * Starlark function adopts it as its frame's locals.
   */
  abstract call(thread: Thread, args: Value[], kwargs: Kwargs | null): Value;
  override hash(): number {
    if (this.identity === 0) this.identity = nextIdentity++;
    return this.identity;
  }
}

export type BuiltinImpl = (thread: Thread, args: Value[], kwargs: Kwargs | null) => Value;

/** A function implemented in TypeScript: `<built-in function name>`. */
export class Builtin extends StarCallable {
  constructor(
    readonly name: string,
    readonly impl: BuiltinImpl,
  ) {
    super();
  }
  get type(): string {
    return 'builtin_function_or_method';
  }
  call(thread: Thread, args: Value[], kwargs: Kwargs | null): Value {
    return this.impl(thread, args, kwargs);
  }
  repr(): string {
    return `<built-in function ${this.name}>`;
  }
}

export type MethodImpl<R> = (thread: Thread, recv: R, args: Value[], kwargs: Kwargs | null) => Value;

/** A method bound to its receiver, as produced by `x.name` without a call: `<built-in method name of T value>`. */
export class BoundMethod<R extends Value> extends StarCallable {
  constructor(
    readonly name: string,
    readonly recv: R,
    readonly recvType: string,
    readonly impl: MethodImpl<R>,
  ) {
    super();
  }
  get type(): string {
    return 'builtin_function_or_method';
  }
  call(thread: Thread, args: Value[], kwargs: Kwargs | null): Value {
    try {
      return this.impl(thread, this.recv, args, kwargs);
    } catch (e) {
      // Methods name themselves in their errors, as starlark-go's do (`append: cannot ...`).
      if (e instanceof StarlarkError && !e.message.startsWith(`${this.name}: `)) throw new StarlarkError(`${this.name}: ${e.message}`, { cause: e });
      throw e;
    }
  }
  override equals(other: StarObject): boolean {
    const o = other as BoundMethod<R>;
    return this.name === o.name && this.recv === o.recv;
  }
  repr(): string {
    return `<built-in method ${this.name} of ${this.recvType} value>`;
  }
}
