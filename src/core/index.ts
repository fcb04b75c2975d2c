export { type Position, position, formatPosition } from './position.js';
export { KilnError, UsageError, isKilnError } from './errors.js';
export { ExitCode } from './exit-codes.js';
export * from './proto.js';
