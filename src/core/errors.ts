import { formatPosition, type Position } from './position.js';

/**
 * The base of every error a user can cause (a bad file, flag, label or request).
 * Anything else that escapes is a bug in Kiln and is reported as an internal error.
 */
export class KilnError extends Error {
  /** `options.cause`: the error this one adds context to (left unchanged: it may be shared). */
  constructor(
    message: string,
    readonly pos?: Position,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
  }

  /** `file:line:col: message`, or just the message when there is no position. */
  format(): string {
    return this.pos ? `${formatPosition(this.pos)}: ${this.message}` : this.message;
  }
}

/** A bad command line: Bazel exits 2 for these. */
export class UsageError extends KilnError {}

export function isKilnError(e: unknown): e is KilnError {
  return e instanceof KilnError;
}
