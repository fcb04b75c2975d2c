/**
 * The dialect options, one type for the resolver (which rejects what the dialect forbids) and the
 * evaluator (which enforces what only shows at run time: recursion, the `set` builtin). Named as
 * starlark-go names them; each relaxes one rule of Bazel's dialect, and all off is Bazel's dialect.
 */
export interface DialectOptions {
  /** The `set` built-in may be used. */
  readonly set?: boolean;
  /**
   * Top-level names may be bound more than once (and a top-level use before the binding refers to
   * the predeclared name, as in Bazel's legacy semantics).
   */
  readonly globalReassign?: boolean;
  /** `load` creates globals rather than file-local names. */
  readonly loadBindsGlobally?: boolean;
  /** Functions may call themselves (checked at run time; runaway recursion then fails with a stack-depth error). */
  readonly recursion?: boolean;
  /** `while` loops are allowed. */
  readonly while?: boolean;
  /** `if`, `for` and `while` may appear outside functions. */
  readonly topLevelControl?: boolean;
}

/** Every option's name, for embedders that expose them (the `kiln starlark --option=NAME` flags). */
export const DIALECT_OPTION_NAMES: readonly (keyof DialectOptions)[] = [
  'set',
  'globalReassign',
  'loadBindsGlobally',
  'recursion',
  'while',
  'topLevelControl',
] satisfies readonly (keyof DialectOptions)[];
