import type { QueryArgument } from '../parser.js';
import type { TargetSet } from '../query-environment.js';
import { expressionArg, type QueryContext, type QueryFunction } from './query-function.js';

/** `same_pkg_direct_rdeps(x)`: the targets in the packages of x that directly depend on some target of x. */
export const samePkgDirectRdepsFunction: QueryFunction = {
  name: 'same_pkg_direct_rdeps',
  argumentTypes: ['expression'],
  mandatoryArguments: 1,
  evaluate: samePackageDirectRdeps,
};

function samePackageDirectRdeps<T>(ctx: QueryContext<T>, args: readonly QueryArgument[]): TargetSet<T> {
  const env = ctx.env;
  const x = expressionArg(ctx, args, 0);
  const out: TargetSet<T> = new Map();
  const packages = new Set<string>();
  for (const t of x.values()) {
    if (packages.has(env.packageOf(t))) continue;
    packages.add(env.packageOf(t));
    for (const s of env.siblings(t)) {
      for (const d of env.dependencies(s)) {
        if (x.has(env.keyOf(d))) {
          out.set(env.keyOf(s), s);
          break;
        }
      }
    }
  }
  return out;
}
