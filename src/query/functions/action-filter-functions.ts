import type { QueryExpr } from '../parser.js';
import { compileRegexp, expressionArg, type QueryFunction } from './query-function.js';

/** What an aquery filter matches an action's mnemonic, input exec paths or output exec paths against. */
export type ActionFilterKind = 'mnemonic' | 'inputs' | 'outputs';

/** One aquery filter of an expression: `mnemonic("Genrule", ...)` keeps the actions whose mnemonic matches. */
export interface ActionFilter {
  readonly kind: ActionFilterKind;
  readonly pattern: RegExp;
}

/**
 * aquery's `mnemonic(pattern, x)`, `inputs(pattern, x)`, `outputs(pattern, x)`: as target
 * expressions they stand for x; the action filters they name are collected from the whole
 * expression ({@link actionFiltersOf}) and applied to the actions of the result, all together, as
 * Bazel's aquery does. The pattern must match the whole mnemonic or exec path.
 */
function actionFilterFunction(kind: ActionFilterKind): QueryFunction {
  return {
    name: kind,
    argumentTypes: ['word', 'expression'],
    mandatoryArguments: 2,
    evaluate: (ctx, args) => expressionArg(ctx, args, 1),
  };
}

export const ACTION_FILTER_FUNCTIONS: readonly QueryFunction[] = (['mnemonic', 'inputs', 'outputs'] as const).map(actionFilterFunction);

/** Every aquery filter in a parsed expression, outermost first. */
export function actionFiltersOf(expr: QueryExpr): ActionFilter[] {
  const out: ActionFilter[] = [];
  const visit = (e: QueryExpr): void => {
    switch (e.kind) {
      case 'function':
        if (e.name === 'mnemonic' || e.name === 'inputs' || e.name === 'outputs') {
          const word = e.args[0];
          if (word?.kind === 'word') out.push({ kind: e.name, pattern: compileRegexp(e.name, `^(?:${word.text})$`) });
        }
        for (const a of e.args) if (a.kind === 'expression') visit(a.expr);
        return;
      case 'let':
        visit(e.value);
        visit(e.body);
        return;
      case 'binary':
        for (const o of e.operands) visit(o);
        return;
      default:
        return;
    }
  };
  visit(expr);
  return out;
}
