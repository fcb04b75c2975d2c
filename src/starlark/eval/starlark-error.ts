import { formatPosition, KilnError, type Position } from '../../core/index.js';

/**
 * A dynamic error raised by a value operation or a builtin, before the evaluator knows where it
 * happened. The evaluator turns it into an {@link EvalError} at the node that ran the operation,
 * so builtins never deal with positions.
 */
export class StarlarkError extends Error {
  /** `options.cause`: the error this one adds context to (a builtin wrapping a host failure). */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StarlarkError';
  }
}

const ELIDE_AFTER = 10;

/** One line of a Starlark backtrace: the function that was running and where it was. */
export interface CallFrame {
  readonly name: string;
  readonly pos: Position;
}

/**
 * A Starlark evaluation error. `pos` is the innermost position (the call or operator that failed);
 * `callStack` lists the frames from the innermost outwards, each at its current call.
 */
export class EvalError extends KilnError {
  declare readonly pos: Position;
  readonly callStack: CallFrame[];
  /** Set while the error unwinds out of a function body: the next annotation adds the caller's frame. */
  needsCallerFrame = false;

  constructor(message: string, pos: Position, callStack: CallFrame[], options?: ErrorOptions) {
    super(message, pos, options);
    this.callStack = callStack;
  }

  /** The backtrace, outermost call first, in the style of starlark-go and Python. */
  backtrace(): string {
    const lines = ['Traceback (most recent call last):'];
    const n = this.callStack.length;
    for (let i = n - 1; i >= 0; i--) {
      // Runaway recursion makes thousands of identical frames: keep the outermost and innermost ones.
      if (n > 2 * ELIDE_AFTER && i === n - 1 - ELIDE_AFTER) {
        lines.push(`  ... ${n - 2 * ELIDE_AFTER} frames omitted ...`);
        i = ELIDE_AFTER;
      }
      const f = this.callStack[i]!;
      lines.push(`  ${formatPosition(f.pos)}: in ${f.name}`);
    }
    lines.push(`Error: ${this.message}`);
    return lines.join('\n');
  }
}
