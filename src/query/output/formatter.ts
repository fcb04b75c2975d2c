import type { QueryTarget } from '../target-loader.js';

/** Bazel's --order_output values. */
export type OrderOutput = 'auto' | 'no' | 'deps' | 'full';

/** Turns a query result into output bytes; one formatter per --output value. */
export interface OutputFormatter {
  /**
   * How the result should be ordered before `format` sees it: `graph` formatters order by the
   * dependency graph themselves and take the result in label order.
   */
  readonly ordering: 'targets' | 'graph' | 'packages';
  format(targets: readonly QueryTarget[], env: OutputEnvironment): string | Uint8Array;
}

export interface OutputEnvironment {
  /** Absolute path of a display path (workspace-relative, or external/<repo>/...). */
  absolutePath(displayPath: string): string;
  /** The result's dependency edges: the direct dependencies of a target that are in the result. */
  successors(t: QueryTarget): readonly QueryTarget[];
  /** Labels of the .bzl files the package of `t` loads, transitively (for BUILD file targets). */
  loadsOf(t: QueryTarget): readonly string[];
  /** --graph:factored (merge nodes with the same predecessors and successors). */
  readonly graphFactored: boolean;
  /** --graph:node_limit: longest node label before it is cut (-1: no limit). */
  readonly graphNodeLimit: number;
  /** --graph:conditional_edges_limit: select() conditions shown on an edge (-1: all, 0: none). */
  readonly graphConditionalEdgesLimit: number;
}
