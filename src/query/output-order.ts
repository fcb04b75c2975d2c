import type { QueryTarget } from './target-loader.js';
import { compareLabels } from './target-loader.js';

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
 * whose dependents have all been printed the greatest label comes next. A dependency cycle is
 * printed as one unit, ranked by its greatest label, members from greatest to least. Reconstructed
 * from Bazel 2.1.0's output on fixtures (see test/query/output-order.test.ts).
 */
export function orderForOutput(targets: readonly QueryTarget[]): QueryTarget[] {
  const n = targets.length;
  const byKey = new Map<string, number>();
  targets.forEach((t, i) => byKey.set(t.label.toString(), i));
  const edges: number[][] = targets.map((t, i) => {
    const out: number[] = [];
    for (const d of dependenciesOf(t)) {
      const j = byKey.get(d);
      if (j !== undefined && j !== i && !out.includes(j)) out.push(j);
    }
    return out;
  });
  // Label order as ranks, so the heap compares integers.
  const rank = new Int32Array(n);
  const sorted = Array.from({ length: n }, (_, i) => i).sort((a, b) => compareLabels(targets[a]!.label, targets[b]!.label));
  sorted.forEach((t, r) => (rank[t] = r));
  const greaterTarget = (a: number, b: number) => rank[a]! > rank[b]!;

  // Strongly connected components (iterative Tarjan), so cycles become single units.
  const comp = new Int32Array(n).fill(-1);
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const members: number[][] = [];
  let counter = 0;
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    const work: [number, number][] = [[root, 0]];
    index[root] = low[root] = counter++;
    stack.push(root);
    onStack[root] = 1;
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const [v, k] = frame;
      if (k < edges[v]!.length) {
        frame[1]++;
        const w = edges[v]![k]!;
        if (index[w] === -1) {
          index[w] = low[w] = counter++;
          stack.push(w);
          onStack[w] = 1;
          work.push([w, 0]);
        } else if (onStack[w]) low[v] = Math.min(low[v]!, index[w]!);
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]![0];
        low[parent] = Math.min(low[parent]!, low[v]!);
      }
      if (low[v] === index[v]) {
        const c = members.length;
        const group: number[] = [];
        let w: number;
        do {
          w = stack.pop()!;
          onStack[w] = 0;
          comp[w] = c;
          group.push(w);
        } while (w !== v);
        group.sort((a, b) => rank[b]! - rank[a]!);
        members.push(group);
      }
    }
  }

  const m = members.length;
  const indegree = new Int32Array(m);
  const compEdges: number[][] = members.map(() => []);
  for (let v = 0; v < n; v++) {
    for (const w of edges[v]!) {
      const a = comp[v]!;
      const b = comp[w]!;
      if (a !== b && !compEdges[a]!.includes(b)) {
        compEdges[a]!.push(b);
        indegree[b]!++;
      }
    }
  }
  // A binary max-heap of ready components, ordered by their greatest label (members[c][0]).
  const greater = (a: number, b: number) => greaterTarget(members[a]![0]!, members[b]![0]!);
  const heap: number[] = [];
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
        let best = k;
        if (l < heap.length && greater(heap[l]!, heap[best]!)) best = l;
        if (r < heap.length && greater(heap[r]!, heap[best]!)) best = r;
        if (best === k) break;
        [heap[k], heap[best]] = [heap[best]!, heap[k]!];
        k = best;
      }
    }
    return top;
  };
  for (let c = 0; c < m; c++) if (indegree[c] === 0) push(c);
  const out: QueryTarget[] = [];
  while (heap.length > 0) {
    const c = pop();
    for (const v of members[c]!) out.push(targets[v]!);
    for (const d of compEdges[c]!) if (--indegree[d]! === 0) push(d);
  }
  return out;
}
