import { KilnError } from '../../core/index.js';
import type { StarlarkSyntaxError } from '../syntax/index.js';

/**
 * All static errors the resolver found in one file, in source order (at least one).
 * `message`/`pos`/`format()` are the first error's, so code that prints one line still says
 * something exact; `formatAll()` gives every error as its own `file:line:col: message` line.
 */
export class StarlarkStaticErrors extends KilnError {
  readonly errors: readonly StarlarkSyntaxError[];

  constructor(errors: readonly StarlarkSyntaxError[]) {
    if (errors.length === 0) throw new Error('StarlarkStaticErrors needs at least one error');
    super(errors[0]!.message, errors[0]!.pos);
    this.errors = errors;
  }

  formatAll(): string {
    return this.errors.map((e) => e.format()).join('\n');
  }
}
