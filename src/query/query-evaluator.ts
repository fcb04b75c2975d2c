import { QUERY_FUNCTIONS, type QueryContext, type QueryFunction } from './functions/index.js';
import type { QueryExpr } from './parser.js';
import type { QueryEnvironment, TargetSet } from './query-environment.js';
import { QueryEvaluationError } from './target-loader.js';

/**
 * Evaluates a parsed query over any target graph; every result is a fresh set the caller may change.
 * `functions` are those the query was parsed with (cquery's and aquery's add their own).
 */
export function evaluateQuery<T>(expr: QueryExpr, env: QueryEnvironment<T>, functions: ReadonlyMap<string, QueryFunction> = QUERY_FUNCTIONS): TargetSet<T> {
  return evaluate(expr, env, new Map(), functions);
}

function evaluate<T>(
  e: QueryExpr,
  env: QueryEnvironment<T>,
  variables: ReadonlyMap<string, TargetSet<T>>,
  functions: ReadonlyMap<string, QueryFunction>,
): TargetSet<T> {
  switch (e.kind) {
    case 'target': {
      const out: TargetSet<T> = new Map();
      for (const t of env.resolvePattern(e.text, e.column)) out.set(env.keyOf(t), t);
      return out;
    }
    case 'variable': {
      const value = variables.get(e.name);
      if (!value) throw new QueryEvaluationError(`undefined variable '${e.name}' (column ${e.column})`);
      return new Map(value);
    }
    case 'let': {
      const bound = new Map(variables);
      bound.set(e.name, evaluate(e.value, env, variables, functions));
      return evaluate(e.body, env, bound, functions);
    }
    case 'set': {
      const out: TargetSet<T> = new Map();
      for (const w of e.words) for (const t of env.resolvePattern(w.text, w.column)) out.set(env.keyOf(t), t);
      return out;
    }
    case 'function': {
      const ctx: QueryContext<T> = { env, evaluate: (x) => evaluate(x, env, variables, functions) };
      const fn = functions.get(e.name);
      if (!fn) throw new QueryEvaluationError(`unknown function '${e.name}' (column ${e.column})`);
      return fn.evaluate(ctx, e.args);
    }
    case 'binary': {
      const [first, ...rest] = e.operands;
      const out = evaluate(first!, env, variables, functions);
      for (const operand of rest) {
        const right = evaluate(operand, env, variables, functions);
        if (e.op === 'union') for (const [k, v] of right) out.set(k, v);
        else if (e.op === 'except') for (const k of right.keys()) out.delete(k);
        else for (const k of [...out.keys()]) if (!right.has(k)) out.delete(k);
      }
      return out;
    }
  }
}
