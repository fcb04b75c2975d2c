import { strongComponents } from '../strong-components.js';
import type { QueryTarget } from '../target-loader.js';
import type { OutputEnvironment } from './formatter.js';

/** The result as a graph of indices into `targets`: successor lists in the order the environment gives. */
export function indexGraph(targets: readonly QueryTarget[], env: OutputEnvironment): number[][] {
  const index = new Map<QueryTarget, number>();
  targets.forEach((t, i) => index.set(t, i));
  return targets.map((t, i) => {
    const out: number[] = [];
    for (const d of env.successors(t)) {
      const j = index.get(d);
      if (j !== undefined && j !== i && !out.includes(j)) out.push(j);
    }
    return out;
  });
}

/** The result's strong-component graph: each dependency cycle one node, no self edges. */
export function condense(targets: readonly QueryTarget[], env: OutputEnvironment): { components: number[][]; edges: number[][]; componentOf: Int32Array } {
  const graph = indexGraph(targets, env);
  const { componentOf, members } = strongComponents(targets.length, graph);
  const edges: Set<number>[] = members.map(() => new Set());
  graph.forEach((out, v) => {
    for (const w of out) if (componentOf[v] !== componentOf[w]) edges[componentOf[v]!]!.add(componentOf[w]!);
  });
  return { components: members, edges: edges.map((s) => [...s]), componentOf };
}
