import { closure, dependencyClosure, reverseEdges } from '../graph-walk.js';
import type { QueryEnvironment, TargetSet } from '../query-environment.js';
import { expressionArg, integerArg, type QueryFunction } from './query-function.js';

/** The targets of `universe` that depend on some of `x` (x included), up to `depth` reverse edges. */
export function reverseClosure<T>(env: QueryEnvironment<T>, universe: TargetSet<T>, x: TargetSet<T>, depth?: number): TargetSet<T> {
  const rev = reverseEdges(env, universe);
  const roots = [...x.entries()].filter(([k]) => universe.has(k)).map(([, t]) => t);
  return closure(env, roots, (t) => rev.get(env.keyOf(t)) ?? [], depth);
}

/** `rdeps(universe, x[, depth])`: the reverse dependencies of x within the transitive closure of universe. */
export const rdepsFunction: QueryFunction = {
  name: 'rdeps',
  argumentTypes: ['expression', 'expression', 'integer'],
  mandatoryArguments: 2,
  evaluate: (ctx, args) => {
    const universe = dependencyClosure(ctx.env, expressionArg(ctx, args, 0).values());
    return reverseClosure(ctx.env, universe, expressionArg(ctx, args, 1), integerArg(args, 2));
  },
};
