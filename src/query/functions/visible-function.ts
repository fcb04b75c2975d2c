import { expressionArg, type QueryFunction } from './query-function.js';

/** `visible(predicate, x)`: the targets of x visible to every target of `predicate`. */
export const visibleFunction: QueryFunction = {
  name: 'visible',
  argumentTypes: ['expression', 'expression'],
  mandatoryArguments: 2,
  evaluate: (ctx, args) => {
    const predicate = [...expressionArg(ctx, args, 0).values()];
    const out = expressionArg(ctx, args, 1);
    for (const [k, t] of out) if (!predicate.every((from) => ctx.env.isVisible(t, from))) out.delete(k);
    return out;
  },
};
