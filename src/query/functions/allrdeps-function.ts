import { dependencyClosure } from '../graph-walk.js';
import { expressionArg, integerArg, type QueryFunction } from './query-function.js';
import { reverseClosure } from './rdeps-function.js';

/** `allrdeps(x[, depth])`: rdeps over the whole universe (--universe_scope, else the workspace's `//...`). */
export const allrdepsFunction: QueryFunction = {
  name: 'allrdeps',
  argumentTypes: ['expression', 'integer'],
  mandatoryArguments: 1,
  evaluate: (ctx, args) => {
    const x = expressionArg(ctx, args, 0);
    const universe = dependencyClosure(ctx.env, [...ctx.env.universe(), ...x.values()]);
    return reverseClosure(ctx.env, universe, x, integerArg(args, 1));
  },
};
