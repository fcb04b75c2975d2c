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
    const out: number[] = [];
    for (const d of successors(t)) {
      const j = rank.get(d);
      if (j !== undefined) out.push(j);
    }
    return sortedUnique(out);
  });
  return reversePostorder(edges).map((i) => sorted[i]!);
}

/** `list` sorted ascending without repeats (in place). */
function sortedUnique(list: number[]): number[] {
  if (list.length < 2) return list;
  list.sort((a, b) => a - b);
  let n = 1;
  for (let i = 1; i < list.length; i++) if (list[i] !== list[n - 1]) list[n++] = list[i]!;
  list.length = n;
  return list;
}

/** Reverse post-order of a depth-first search taking nodes and successor lists in the order given. */
export function reversePostorder(successors: readonly (readonly number[])[]): number[] {
  const n = successors.length;
  const visited = new Uint8Array(n);
  const post: number[] = [];
  // The search's stack as two parallel arrays: the node, and how many of its successors it has taken.
  const nodes = new Int32Array(n);
  const taken = new Int32Array(n);
  for (let root = 0; root < n; root++) {
    if (visited[root]) continue;
    visited[root] = 1;
    let top = 0;
    nodes[0] = root;
    taken[0] = 0;
    while (top >= 0) {
      const v = nodes[top]!;
      const next = successors[v]!;
      const k = taken[top]!;
      if (k < next.length) {
        taken[top] = k + 1;
        const w = next[k]!;
        if (!visited[w]) {
          visited[w] = 1;
          top++;
          nodes[top] = w;
          taken[top] = 0;
        }
        continue;
      }
      top--;
      post.push(v);
    }
  }
  return post.reverse();
}
