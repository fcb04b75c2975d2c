import { QueryEvaluationError } from '../target-loader.js';
import type { QueryArgument, QueryExpr } from '../parser.js';
import type { QueryEnvironment, TargetSet } from '../query-environment.js';

/** How the parser reads an argument: a query expression, a bare word (regexp, attribute name), an integer. */
export type ArgumentType = 'expression' | 'word' | 'integer';

/** What a function sees while it runs: the environment and evaluation of its expression arguments. */
export interface QueryContext<T> {
  readonly env: QueryEnvironment<T>;
  evaluate(expr: QueryExpr): TargetSet<T>;
}

/**
 * One function of the query language: its argument types (the first `mandatoryArguments` required;
 * an endless iterable takes any number, as rbuildfiles does).
 */
export interface QueryFunction {
  readonly name: string;
  readonly argumentTypes: Iterable<ArgumentType>;
  readonly mandatoryArguments: number;
  evaluate<T>(ctx: QueryContext<T>, args: readonly QueryArgument[]): TargetSet<T>;
}

/** The value of an expression argument. */
export function expressionArg<T>(ctx: QueryContext<T>, args: readonly QueryArgument[], i: number): TargetSet<T> {
  const a = args[i]!;
  if (a.kind !== 'expression') throw new Error(`query: argument ${i} is not an expression`);
  return ctx.evaluate(a.expr);
}

export function wordArg(args: readonly QueryArgument[], i: number): string {
  const a = args[i]!;
  if (a.kind !== 'word') throw new Error(`query: argument ${i} is not a word`);
  return a.text;
}

/** An optional integer argument (a depth or count); undefined when absent. */
export function integerArg(args: readonly QueryArgument[], i: number): number | undefined {
  const a = args[i];
  if (a === undefined) return undefined;
  if (a.kind !== 'integer') throw new Error(`query: argument ${i} is not an integer`);
  return a.value;
}

/** A user's regexp, compiled; a malformed one is an evaluation error naming the function. */
export function compileRegexp(fn: string, pattern: string): RegExp {
  try {
    return new RegExp(pattern);
  } catch (e) {
    throw new QueryEvaluationError(`illegal '${fn}' pattern regexp '${pattern}': ${(e as Error).message}`, undefined, { cause: e });
  }
}

export function setOf<T>(env: QueryEnvironment<T>, targets: Iterable<T>): TargetSet<T> {
  const out: TargetSet<T> = new Map();
  for (const t of targets) out.set(env.keyOf(t), t);
  return out;
}
