import type { QueryArgument } from '../parser.js';
import type { TargetSet } from '../query-environment.js';
import { expressionArg, wordArg, type QueryContext, type QueryFunction } from './query-function.js';

/** `labels(attr, x)`: the targets named by attribute `attr` of the rules of x (every select branch). */
export const labelsFunction: QueryFunction = {
  name: 'labels',
  argumentTypes: ['word', 'expression'],
  mandatoryArguments: 2,
  evaluate: labels,
};

function labels<T>(ctx: QueryContext<T>, args: readonly QueryArgument[]): TargetSet<T> {
  const name = wordArg(args, 0);
  const out: TargetSet<T> = new Map();
  for (const t of expressionArg(ctx, args, 1).values()) {
    if (!ctx.env.isRule(t)) continue;
    for (const d of ctx.env.attributeTargets(t, name)) out.set(ctx.env.keyOf(d), d);
  }
  return out;
}
