import { KilnError, type Position } from '../../core/index.js';

/**
 * A static error in a Starlark file: a bad token, a parse error, or a resolver error.
 * Always carries the position of the offending token; `format()` gives `file:line:col: message`.
 */
export class StarlarkSyntaxError extends KilnError {
  declare readonly pos: Position;

  constructor(message: string, pos: Position) {
    super(message, pos);
  }
}
