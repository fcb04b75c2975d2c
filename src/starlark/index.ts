/**
 * Kiln's Starlark interpreter: the only entry point other layers may import.
 * syntax (scanner, parser, AST) -> resolve (static checks, frame layout) -> eval (values, builtins, evaluator).
 * The interpreter knows nothing about builds: embedders supply `load`, `print` and predeclared names.
 */
export * from './syntax/index.js';
export * from './resolve/index.js';
export * from './eval/index.js';
