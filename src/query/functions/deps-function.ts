import { dependencyClosure } from '../graph-walk.js';
import { expressionArg, integerArg, type QueryFunction } from './query-function.js';

/** `deps(x[, depth])`: x and everything it depends on, transitively (up to `depth` edges). */
export const depsFunction: QueryFunction = {
  name: 'deps',
  argumentTypes: ['expression', 'integer'],
  mandatoryArguments: 1,
  evaluate: (ctx, args) => dependencyClosure(ctx.env, expressionArg(ctx, args, 0).values(), integerArg(args, 1)),
};
