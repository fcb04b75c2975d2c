import type { QueryArgument } from '../parser.js';
import type { TargetSet } from '../query-environment.js';
import { expressionArg, type QueryContext, type QueryFunction } from './query-function.js';

/** `siblings(x)`: every target of the packages of x. */
export const siblingsFunction: QueryFunction = {
  name: 'siblings',
  argumentTypes: ['expression'],
  mandatoryArguments: 1,
  evaluate: siblings,
};

function siblings<T>(ctx: QueryContext<T>, args: readonly QueryArgument[]): TargetSet<T> {
  const out: TargetSet<T> = new Map();
  const packages = new Set<string>();
  for (const t of expressionArg(ctx, args, 0).values()) {
    if (packages.has(ctx.env.packageOf(t))) continue;
    packages.add(ctx.env.packageOf(t));
    for (const s of ctx.env.siblings(t)) out.set(ctx.env.keyOf(s), s);
  }
  return out;
}
