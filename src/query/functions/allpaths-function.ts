import { dependencyClosure } from '../graph-walk.js';
import { expressionArg, type QueryFunction } from './query-function.js';
import { reverseClosure } from './rdeps-function.js';

/** `allpaths(from, to)`: every target on some dependency path from `from` to `to`. */
export const allpathsFunction: QueryFunction = {
  name: 'allpaths',
  argumentTypes: ['expression', 'expression'],
  mandatoryArguments: 2,
  evaluate: (ctx, args) => {
    const forward = dependencyClosure(ctx.env, expressionArg(ctx, args, 0).values());
    return reverseClosure(ctx.env, forward, expressionArg(ctx, args, 1));
  },
};
