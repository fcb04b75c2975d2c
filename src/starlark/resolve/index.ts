/**
 * Starlark static checks: binds identifiers and lays out frames (see the contract in
 * ../syntax/ast.ts), reporting every static error of a file at once.
 */
export {
  resolveFile,
  resolveFileCollectingErrors,
  type NamePredicate,
  type NameSet,
} from './resolver.js';
export { DIALECT_OPTION_NAMES, type DialectOptions } from './dialect-options.js';
export { StarlarkStaticErrors } from './static-errors.js';
