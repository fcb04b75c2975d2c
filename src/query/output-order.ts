import { compareLabels, type QueryTarget } from './target-loader.js';

/**
 * Bazel's `--order_output=full` (and `auto`) order: the reverse post-order of a depth-first search
 * that starts from every target in label order and follows each target's edges in label order, so
 * dependents come before their dependencies, a cycle is printed from where the search entered it,
 * and the result does not depend on evaluation order. The edges are the result's graph (`successors`).
 * Checked against Bazel 2.1.0 by the differential tests (test/query/differential).
 */
export function orderForOutput(targets: readonly QueryTarget[], successors: (t: QueryTarget) => readonly QueryTarget[]): QueryTarget[] {
  const sorted = [...targets].sort((a, b) => compareLabels(a.label, b.label));
  const rank = new Map<QueryTarget, number>();
  sorted.forEach((t, i) => rank.set(t, i));
  const edges = sorted.map((t) => {
    const out = new Set<number>();
    for (const d of successors(t)) {
      const j = rank.get(d);
      if (j !== undefined) out.add(j);
    }
    return [...out].sort((a, b) => a - b);
  });
  return reversePostorder(edges).map((i) => sorted[i]!);
}

/** Reverse post-order of a depth-first search taking nodes and successor lists in the order given. */
export function reversePostorder(successors: readonly (readonly number[])[]): number[] {
  const n = successors.length;
  const visited = new Uint8Array(n);
  const post: number[] = [];
  for (let root = 0; root < n; root++) {
    if (visited[root]) continue;
    visited[root] = 1;
    const work: [number, number][] = [[root, 0]];
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const [v, k] = frame;
      if (k < successors[v]!.length) {
        frame[1]++;
        const w = successors[v]![k]!;
        if (!visited[w]) {
          visited[w] = 1;
          work.push([w, 0]);
        }
        continue;
      }
      work.pop();
      post.push(v);
    }
  }
  return post.reverse();
}
