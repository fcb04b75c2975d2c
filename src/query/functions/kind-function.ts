import { compileRegexp, expressionArg, wordArg, type QueryFunction } from './query-function.js';

/** `kind(pattern, x)`: the targets of x whose kind (`genrule rule`, `source file`...) the regexp matches. */
export const kindFunction: QueryFunction = {
  name: 'kind',
  argumentTypes: ['word', 'expression'],
  mandatoryArguments: 2,
  evaluate: (ctx, args) => {
    const re = compileRegexp('kind', wordArg(args, 0));
    const out = expressionArg(ctx, args, 1);
    for (const [k, t] of out) if (!re.test(ctx.env.kindOf(t))) out.delete(k);
    return out;
  },
};
