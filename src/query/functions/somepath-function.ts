import type { QueryEnvironment, TargetSet } from '../query-environment.js';
import { expressionArg, type QueryFunction } from './query-function.js';

/** `somepath(from, to)`: one shortest dependency path from some target of `from` to some of `to`, in path order. */
export const somepathFunction: QueryFunction = {
  name: 'somepath',
  argumentTypes: ['expression', 'expression'],
  mandatoryArguments: 2,
  evaluate: (ctx, args) => shortestPath(ctx.env, expressionArg(ctx, args, 0), expressionArg(ctx, args, 1)),
};

function shortestPath<T>(env: QueryEnvironment<T>, from: TargetSet<T>, to: TargetSet<T>): TargetSet<T> {
  const parent = new Map<string, string | null>();
  const byKey: TargetSet<T> = new Map();
  let frontier: T[] = [];
  for (const [k, t] of from) {
    parent.set(k, null);
    byKey.set(k, t);
    frontier.push(t);
  }
  let end = [...from.keys()].find((k) => to.has(k));
  search: while (end === undefined && frontier.length > 0) {
    const following: T[] = [];
    for (const t of frontier) {
      const k = env.keyOf(t);
      for (const d of env.dependencies(t)) {
        const dk = env.keyOf(d);
        if (parent.has(dk)) continue;
        parent.set(dk, k);
        byKey.set(dk, d);
        if (to.has(dk)) {
          end = dk;
          break search;
        }
        following.push(d);
      }
    }
    frontier = following;
  }
  const path: T[] = [];
  for (let k: string | null | undefined = end; k != null; k = parent.get(k)) path.push(byKey.get(k)!);
  const out: TargetSet<T> = new Map();
  for (const t of path.reverse()) out.set(env.keyOf(t), t);
  return out;
}
