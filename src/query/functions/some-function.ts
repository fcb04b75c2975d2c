import { QueryEvaluationError } from '../target-loader.js';
import { expressionArg, integerArg, setOf, type QueryFunction } from './query-function.js';

/** `some(x[, count])`: `count` (default 1) targets of x, the least labels first; x must not be empty. */
export const someFunction: QueryFunction = {
  name: 'some',
  argumentTypes: ['expression', 'integer'],
  mandatoryArguments: 1,
  evaluate: (ctx, args) => {
    const x = expressionArg(ctx, args, 0);
    if (x.size === 0) throw new QueryEvaluationError('argument set is empty');
    const count = integerArg(args, 1) ?? 1;
    if (count < 1) throw new QueryEvaluationError(`some() takes a count of at least 1, not ${count}`);
    return setOf(ctx.env, [...x.values()].sort((a, b) => ctx.env.compare(a, b)).slice(0, count));
  },
};
