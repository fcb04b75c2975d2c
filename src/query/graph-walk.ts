import type { QueryEnvironment, TargetSet } from './query-environment.js';

/** Breadth-first closure over `next` from `roots`, at most `depth` steps (unbounded when undefined). */
export function closure<T>(env: QueryEnvironment<T>, roots: Iterable<T>, next: (t: T) => Iterable<T>, depth?: number): TargetSet<T> {
  const seen: TargetSet<T> = new Map();
  let frontier: T[] = [];
  for (const t of roots) {
    const k = env.keyOf(t);
    if (!seen.has(k)) {
      seen.set(k, t);
      frontier.push(t);
    }
  }
  for (let level = 0; frontier.length > 0 && (depth === undefined || level < depth); level++) {
    const following: T[] = [];
    for (const t of frontier) {
      for (const d of next(t)) {
        const k = env.keyOf(d);
        if (seen.has(k)) continue;
        seen.set(k, d);
        following.push(d);
      }
    }
    frontier = following;
  }
  return seen;
}

/** Reverse dependency edges among `universe` (keys to the targets depending on them). */
export function reverseEdges<T>(env: QueryEnvironment<T>, universe: TargetSet<T>): Map<string, T[]> {
  const rev = new Map<string, T[]>();
  for (const t of universe.values()) {
    for (const d of env.dependencies(t)) {
      const k = env.keyOf(d);
      if (!universe.has(k)) continue;
      let list = rev.get(k);
      if (!list) rev.set(k, (list = []));
      list.push(t);
    }
  }
  return rev;
}

/** The transitive closure of `roots` with the dependencies as query sees them. */
export function dependencyClosure<T>(env: QueryEnvironment<T>, roots: Iterable<T>, depth?: number): TargetSet<T> {
  return closure(env, roots, (t) => env.dependencies(t), depth);
}
