import { compileRegexp, expressionArg, wordArg, type QueryFunction } from './query-function.js';

/** `filter(pattern, x)`: the targets of x whose label the regexp matches. */
export const filterFunction: QueryFunction = {
  name: 'filter',
  argumentTypes: ['word', 'expression'],
  mandatoryArguments: 2,
  evaluate: (ctx, args) => {
    const re = compileRegexp('filter', wordArg(args, 0));
    const out = expressionArg(ctx, args, 1);
    for (const [k, t] of out) if (!re.test(ctx.env.labelOf(t))) out.delete(k);
    return out;
  },
};
