import type { QueryTarget } from './engine.js';
import { compareLabels } from './engine.js';

/** Canonical labels a target depends on inside its package graph. */
function dependenciesOf(t: QueryTarget): readonly string[] {
  const target = t.target;
  switch (target.kind) {
    case 'rule':
      return target.dependencies;
    case 'generated':
      return [t.label.sibling(target.generatingRule).toString()];
    case 'package_group':
      return target.includes;
    default:
      return [];
  }
}

/**
 * Bazel's default output order (`--order_output=auto`, which is `full` for these formatters): a
 * topological order of the result's dependency subgraph, dependents first, where among the targets
 * whose dependents have all been printed the greatest label comes next. Reconstructed from Bazel
 * 2.1.0's output on fixtures (see test/query/output-order.test.ts).
 */
export function orderForOutput(targets: readonly QueryTarget[]): QueryTarget[] {
  const byKey = new Map<string, number>();
  targets.forEach((t, i) => byKey.set(t.label.toString(), i));
  const indegree = new Int32Array(targets.length);
  const edges: number[][] = targets.map((t) => {
    const out: number[] = [];
    for (const d of dependenciesOf(t)) {
      const j = byKey.get(d);
      if (j !== undefined && !out.includes(j)) {
        out.push(j);
        indegree[j]!++;
      }
    }
    return out;
  });
  // A binary max-heap of ready targets, ordered by label.
  const heap: number[] = [];
  const greater = (a: number, b: number) => compareLabels(targets[a]!.label, targets[b]!.label) > 0;
  const push = (i: number) => {
    heap.push(i);
    let k = heap.length - 1;
    while (k > 0) {
      const parent = (k - 1) >> 1;
      if (!greater(heap[k]!, heap[parent]!)) break;
      [heap[k], heap[parent]] = [heap[parent]!, heap[k]!];
      k = parent;
    }
  };
  const pop = (): number => {
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let k = 0;
      for (;;) {
        const l = 2 * k + 1;
        const r = l + 1;
        let m = k;
        if (l < heap.length && greater(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && greater(heap[r]!, heap[m]!)) m = r;
        if (m === k) break;
        [heap[k], heap[m]] = [heap[m]!, heap[k]!];
        k = m;
      }
    }
    return top;
  };
  for (let i = 0; i < targets.length; i++) if (indegree[i] === 0) push(i);
  const out: QueryTarget[] = [];
  const done = new Uint8Array(targets.length);
  while (out.length < targets.length) {
    if (heap.length === 0) {
      // A dependency cycle among the results: continue with the greatest unprinted target.
      let best = -1;
      for (let i = 0; i < targets.length; i++) if (!done[i] && (best < 0 || greater(i, best))) best = i;
      indegree[best] = 0;
      push(best);
    }
    const i = pop();
    if (done[i]) continue;
    done[i] = 1;
    out.push(targets[i]!);
    for (const j of edges[i]!) if (--indegree[j]! === 0 && !done[j]) push(j);
  }
  return out;
}
