import { DEFAULT_CONDITION, Selector, SelectorList } from '../../loading/index.js';
import { compareLabels, type QueryTarget } from '../target-loader.js';
import type { OutputEnvironment, OutputFormatter } from './formatter.js';
import { indexGraph } from './result-graph.js';
import { reversePostorder } from '../output-order.js';

/** Room kept in a cut node label for `\n...and N more items` (as Bazel reserves it). */
const RESERVED_LABEL_CHARS = '\\n...and 9999999 more items'.length;

/**
 * `--output=graph`: the result's dependency graph in GraphViz dot, as Bazel prints it with
 * --order_output=full: with --graph:factored (the default) targets with the same predecessors and
 * successors share one node (labels joined by `\n`); nodes in topological order (depth-first
 * post-order over label-sorted nodes and edges, reversed), each followed by its edges; an edge that
 * only a select() branch gives is labelled with its conditions.
 */
export const graphOutput: OutputFormatter = {
  ordering: 'graph',
  format: (targets, env) => {
    const graph = indexGraph(targets, env);
    const classes = env.graphFactored ? partition(targets, graph) : targets.map((_, i) => [i]);
    // Members in label order, classes in the lexicographic order of their member lists.
    const byLabel = (a: number, b: number) => compareLabels(targets[a]!.label, targets[b]!.label);
    for (const c of classes) c.sort(byLabel);
    const compareClasses = (x: readonly number[], y: readonly number[]) => {
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const d = byLabel(x[i]!, y[i]!);
        if (d !== 0) return d;
      }
      return x.length - y.length;
    };
    classes.sort(compareClasses);
    const classOf = new Int32Array(targets.length);
    classes.forEach((c, k) => c.forEach((v) => (classOf[v] = k)));
    // Classes are sorted, so class indices compare as the classes do.
    const successors = classes.map((members) => {
      const out = new Set<number>();
      for (const v of members) for (const w of graph[v]!) out.add(classOf[w]!);
      return [...out].sort((a, b) => a - b);
    });
    const conditions = conditionalEdges(targets, env);
    const nodeLabel = (k: number) =>
      classLabel(
        classes[k]!.map((v) => targets[v]!.label.toString()),
        env.graphNodeLimit,
      );

    let out = 'digraph mygraph {\n  node [shape=box];\n';
    for (const k of reversePostorder(successors)) {
      out += `  "${nodeLabel(k)}"\n`;
      for (const s of successors[k]!) {
        out += `  "${nodeLabel(k)}" -> "${nodeLabel(s)}"\n`;
        const label = edgeLabel(classes[k]!, classes[s]!, targets, conditions, env.graphConditionalEdgesLimit);
        if (label !== '') out += `  [label="${label}"];\n`;
      }
    }
    return `${out}}\n`;
  },
};

/** Groups targets with the same predecessors and the same successors. */
function partition(targets: readonly QueryTarget[], graph: readonly (readonly number[])[]): number[][] {
  const preds: number[][] = targets.map(() => []);
  graph.forEach((out, v) => out.forEach((w) => preds[w]!.push(v)));
  const groups = new Map<string, number[]>();
  targets.forEach((_, v) => {
    const key = `${[...preds[v]!].sort((a, b) => a - b).join(',')}|${[...graph[v]!].sort((a, b) => a - b).join(',')}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = []));
    g.push(v);
  });
  return [...groups.values()];
}

/** A node's text: its labels joined by `\n`, cut with `...and N more items` past the limit. */
function classLabel(labels: readonly string[], limit: number): string {
  let buf = '';
  for (let i = 0; i < labels.length; i++) {
    if (i > 0) {
      buf += '\\n';
      if (limit !== -1 && buf.length + labels[i]!.length > limit - RESERVED_LABEL_CHARS) return `${buf}...and ${labels.length - i} more items`;
    }
    buf += labels[i];
  }
  return buf;
}

/** For each rule of the result, the select() conditions (default included) under which it names a dependency. */
function conditionalEdges(targets: readonly QueryTarget[], env: OutputEnvironment): Map<QueryTarget, Map<string, string[]>> {
  const out = new Map<QueryTarget, Map<string, string[]>>();
  for (const t of targets) {
    const rule = t.target;
    if (rule.kind !== 'rule' || env.successors(t).length === 0) continue;
    const deps = new Set(rule.dependencies);
    const byDependency = new Map<string, string[]>();
    for (const v of rule.attrs.values()) {
      if (!(v instanceof SelectorList)) continue;
      for (const part of v.parts) {
        if (!(part instanceof Selector)) continue;
        for (const [condition, value] of part.entries) {
          const labels =
            typeof value === 'string' ? [value] : Array.isArray(value) ? (value as unknown[]).filter((x): x is string => typeof x === 'string') : [];
          for (const l of labels) {
            if (!deps.has(l)) continue;
            let list = byDependency.get(l);
            if (!list) byDependency.set(l, (list = []));
            if (!list.includes(condition)) list.push(condition);
          }
        }
      }
    }
    if (byDependency.size > 0) out.set(t, byDependency);
  }
  return out;
}

/** The conditions of the edges from one node to another, as Bazel 2.1 concatenates them. */
function edgeLabel(
  from: readonly number[],
  to: readonly number[],
  targets: readonly QueryTarget[],
  conditions: Map<QueryTarget, Map<string, string[]>>,
  limitOption: number,
): string {
  if (limitOption === 0) return '';
  let buf = '';
  const annotated = new Set<string>();
  for (const s of from) {
    const byDependency = conditions.get(targets[s]!);
    if (!byDependency) continue;
    for (const d of to) {
      const list = byDependency.get(targets[d]!.label.toString());
      if (!list) continue;
      const sorted = [...list].sort((a, b) => (a === DEFAULT_CONDITION ? 1 : b === DEFAULT_CONDITION ? -1 : a < b ? -1 : a > b ? 1 : 0));
      const limit = limitOption === -1 ? sorted.length : limitOption - 1;
      let first = true;
      for (const c of sorted.slice(0, limit)) {
        if (annotated.has(c)) continue;
        annotated.add(c);
        if (!first) buf += '\\n';
        buf += c;
        first = false;
      }
      if (sorted.length > limit) buf += '...';
    }
  }
  return buf;
}
