import { EvalError, StarlarkError, type CallFrame } from './starlark-error.js';
import type { Thread } from './thread.js';
import type { Value } from './values/value.js';
import type { Position } from '../../core/index.js';
import type { CallExpr } from '../syntax/index.js';

/** A shared box for a variable captured by a nested function (starlark-go's cell). */
export class Cell {
  v: Value | undefined = undefined;
}

/** What a frame runs: a function's code, or a module's top level. */
export interface FrameCode {
  /** The function's name (`<toplevel>` for a module). */
  readonly name: string;
  /** Where it is defined (the module's start for top-level code). */
  readonly pos: Position;
}

/** The activation of one function (or of a module's top level). */
export class Frame {
  /** Return value, set by `return` (status RETURN). */
  result: Value | undefined = undefined;
  /**
   * The call this frame made last, set by every call site just before it calls: while a call is
   * running, the frame's current call (the thread's call-stack API reads it). Null before the first.
   */
  call: CallExpr | null = null;
  constructor(
    /** Local slots by resolver index; a `cell` slot holds a {@link Cell}; undefined = unassigned. */
    readonly locals: (Value | Cell | undefined)[],
    /** The closure's captured cells (`free` bindings by index). */
    readonly free: readonly Cell[],
    readonly thread: Thread,
    readonly code: FrameCode,
  ) {}
}

/** Statement completion codes: control flow without exceptions. */
export const NORMAL = 0;
export const BREAK = 1;
export const CONTINUE = 2;
export const RETURN = 3;
export type Completion = 0 | 1 | 2 | 3;

export type ExprCode = (fr: Frame) => Value;
export type StmtCode = (fr: Frame) => Completion;

/** A new positioned error, starting its call stack in `fnName`. */
export function evalError(message: string, pos: Position, fnName: string, options?: ErrorOptions): EvalError {
  return new EvalError(message, pos, [{ name: fnName, pos }], options);
}

function isStackOverflow(e: unknown): boolean {
  // No RegExp here: this runs at the stack limit, where V8 cannot compile one.
  return e instanceof RangeError && e.message.includes('call stack');
}

/**
 * Turns whatever an operation threw into a positioned EvalError: a fresh StarlarkError gets this
 * position; an EvalError leaving a callee gets the caller's frame; a JS stack overflow becomes
 * starlark-go's clean "Starlark stack overflow". Anything else is a bug and passes through.
 */
export function annotate(e: unknown, pos: Position, fnName: string): unknown {
  if (e instanceof StarlarkError) return evalError(e.message, pos, fnName, { cause: e });
  if (e instanceof EvalError) {
    if (e.needsCallerFrame) {
      e.needsCallerFrame = false;
      e.callStack.push({ name: fnName, pos } satisfies CallFrame);
    }
    return e;
  }
  if (isStackOverflow(e)) return evalError('Starlark stack overflow', pos, fnName);
  // JS engine limits (a string or array beyond V8's maximum length) are the program's fault too.
  if (e instanceof RangeError) return evalError(`value too large: ${e.message}`, pos, fnName, { cause: e });
  return e;
}
