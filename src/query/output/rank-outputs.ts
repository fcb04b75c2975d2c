import { compareLabels, type QueryTarget } from '../target-loader.js';
import { condense } from './result-graph.js';
import type { OutputEnvironment, OutputFormatter } from './formatter.js';

/**
 * `--output=minrank`: `rank label`, where a root of the result has rank 0 and every other target the
 * length of the shortest path from a root; the members of a dependency cycle share one rank.
 */
export const minrankOutput: OutputFormatter = {
  ordering: 'graph',
  format: (targets, env) => printRanks(targets, env, minimumRanks),
};

/** `--output=maxrank`: like minrank, with the length of the longest (acyclic) path from a root. */
export const maxrankOutput: OutputFormatter = {
  ordering: 'graph',
  format: (targets, env) => printRanks(targets, env, maximumRanks),
};

type RankFunction = (components: readonly (readonly number[])[], edges: readonly (readonly number[])[]) => Int32Array;

/** Ranks per strongly connected component, printed by rank then label (Bazel's --order_output=full form). */
function printRanks(targets: readonly QueryTarget[], env: OutputEnvironment, rankOf: RankFunction): string {
  const { components, edges, componentOf } = condense(targets, env);
  const ranks = rankOf(components, edges);
  const rows = targets.map((t, i) => ({ rank: ranks[componentOf[i]!]!, t }));
  rows.sort((a, b) => a.rank - b.rank || compareLabels(a.t.label, b.t.label));
  return rows.map((r) => `${r.rank} ${r.t.label}\n`).join('');
}

function predecessorCounts(edges: readonly (readonly number[])[]): Int32Array {
  const indegree = new Int32Array(edges.length);
  for (const out of edges) for (const d of out) indegree[d]!++;
  return indegree;
}

/** Breadth-first from the roots: the first rank that reaches a component is its rank. */
const minimumRanks: RankFunction = (components, edges) => {
  const rank = new Int32Array(components.length).fill(-1);
  const indegree = predecessorCounts(edges);
  let frontier: number[] = [];
  for (let c = 0; c < components.length; c++) if (indegree[c] === 0) (rank[c] = 0), frontier.push(c);
  for (let r = 1; frontier.length > 0; r++) {
    const next: number[] = [];
    for (const c of frontier) for (const d of edges[c]!) if (rank[d] === -1) (rank[d] = r), next.push(d);
    frontier = next;
  }
  return rank;
};

/** In topological order: one more than the greatest rank of a predecessor. */
const maximumRanks: RankFunction = (components, edges) => {
  const rank = new Int32Array(components.length);
  const indegree = predecessorCounts(edges);
  const ready: number[] = [];
  for (let c = 0; c < components.length; c++) if (indegree[c] === 0) ready.push(c);
  while (ready.length > 0) {
    const c = ready.pop()!;
    for (const d of edges[c]!) {
      rank[d] = Math.max(rank[d]!, rank[c]! + 1);
      if (--indegree[d]! === 0) ready.push(d);
    }
  }
  return rank;
};
