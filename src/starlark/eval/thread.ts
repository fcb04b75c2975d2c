import type { DialectOptions } from '../resolve/index.js';
import type { CallExpr } from '../syntax/index.js';
import type { Frame } from './frame.js';
import { StarlarkError, type CallFrame } from './starlark-error.js';
import { StarCallable, type Kwargs } from './values/callable.js';
import { typeName } from './values/describe.js';
import type { Value } from './values/value.js';

/** The loaded module's exported names (frozen). */
export type ModuleGlobals = ReadonlyMap<string, Value>;

export interface ThreadHooks {
  /** Called by `load(module, ...)`; returns the module's exported globals. Errors are reported at the load. */
  readonly load?: (thread: Thread, module: string) => ModuleGlobals;
  /** Called by `print`; the default writes nothing. */
  readonly print?: (thread: Thread, msg: string) => void;
}

/** The deepest Starlark call chain allowed before a clean "stack overflow" error. */
export const MAX_CALL_DEPTH = 3000;

/**
 * The state of one Starlark computation, as in starlark-go: a name, the embedder's hooks and
 * dialect options, and the call stack. One thread runs one module at a time.
 *
 * The call stack costs the evaluator one store per call (each call site records its syntax node
 * on its frame) and one per function activation; nothing is built until an embedder asks.
 */
export class Thread {
  readonly name: string;
  readonly options: DialectOptions;
  readonly load: ThreadHooks['load'];
  readonly printHook: ThreadHooks['print'];
  /** How many Starlark frames are running (a module's top level counts as one). */
  depth = 0;
  /** The running frames, outermost first; entries from `depth` on are stale. */
  readonly frames: Frame[] = [];
  /** Embedder-owned data (e.g. the loading phase's package context). */
  readonly locals = new Map<string, unknown>();

  constructor(name: string, hooks: ThreadHooks = {}, options: DialectOptions = {}) {
    this.name = name;
    this.load = hooks.load;
    this.printHook = hooks.print;
    this.options = options;
  }

  /**
   * The call stack, outermost frame first (as starlark-go's CallStack): each frame's function and
   * the position of the call it is making (the call's `(`, as in backtraces).
   */
  callStack(): CallFrame[] {
    const out: CallFrame[] = [];
    for (let i = 0; i < this.depth; i++) out.push(frameInfo(this.frames[i]!));
    return out;
  }

  /**
   * One frame of the call stack, counted from the innermost: 0 is the frame whose call is running
   * (inside a builtin, the builtin's caller), `depth - 1` the outermost. Undefined beyond the stack.
   */
  callFrame(depth: number): CallFrame | undefined {
    const fr = this.frameAt(depth);
    return fr && frameInfo(fr);
  }

  /**
   * The syntax of the call frame `depth` (counted as in {@link callFrame}) is making, for
   * embedders that need more than its position: the callee, where the call starts.
   */
  callSyntax(depth: number): CallExpr | undefined {
    return this.frameAt(depth)?.call ?? undefined;
  }

  private frameAt(depth: number): Frame | undefined {
    const i = this.depth - 1 - depth;
    return i >= 0 && depth >= 0 ? this.frames[i] : undefined;
  }

  print(msg: string): void {
    this.printHook?.(this, msg);
  }

  /** Calls any callable value; fails like starlark-go for a non-callable one. */
  call(fn: Value, args: Value[], kwargs: Kwargs | null = null): Value {
    if (!(fn instanceof StarCallable)) throw new StarlarkError(`invalid call of non-function (${typeName(fn)})`);
    return fn.call(this, args, kwargs);
  }
}

function frameInfo(fr: Frame): CallFrame {
  return { name: fr.code.name, pos: fr.call?.lparen ?? fr.code.pos };
}
