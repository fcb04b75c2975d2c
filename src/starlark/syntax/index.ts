/**
 * Starlark syntax: scanner, parser and syntax tree. Other parts of src/starlark import from here;
 * other layers go through src/starlark/index.ts.
 */
export type * from './ast.js';
export { parseFile, parseExpression } from './parser.js';
export { Scanner } from './scanner.js';
export { Token, describeToken } from './token.js';
export { StarlarkSyntaxError } from './syntax-error.js';
export { walk, type Visitor } from './walk.js';
export { printFile, printStmt, printExpr, type PrintOptions } from './ast-printer.js';
