import type { OrderOutput, OutputFormatter } from './output/index.js';
import { orderForOutput } from './output-order.js';
import { compareLabels, type QueryTarget } from './target-loader.js';

/** What output needs of the environment that evaluated the result: its edges and packages' loads. */
export interface ResultGraphSource {
  resultSuccessors(result: readonly QueryTarget[]): (t: QueryTarget) => readonly QueryTarget[];
  loadsOf(t: QueryTarget): readonly string[];
}

export interface QueryOutputOptions {
  readonly orderOutput: OrderOutput;
  readonly graphFactored?: boolean;
  readonly graphNodeLimit?: number;
  readonly graphConditionalEdgesLimit?: number;
  /** Absolute path of a display path (workspace-relative, or external/<repo>/...). */
  absolutePath(displayPath: string): string;
}

/**
 * Orders a result (given in evaluation order) as --order_output says and formats it: `full` and
 * `auto` print dependents before their dependencies (Bazel's order, over the edges evaluation saw);
 * `deps` does the same (Bazel's is an arbitrary topological order); `no` keeps evaluation order.
 * Graph formatters (graph, minrank, maxrank) always see the result in label order.
 */
export function formatQueryResult(
  result: readonly QueryTarget[],
  formatter: OutputFormatter,
  environment: ResultGraphSource,
  options: QueryOutputOptions,
): string | Uint8Array {
  const successors = environment.resultSuccessors(result);
  const sorted = () => [...result].sort((a, b) => compareLabels(a.label, b.label));
  const ordered =
    formatter.ordering === 'graph' ? sorted() : formatter.ordering === 'packages' || options.orderOutput === 'no' ? result : orderForOutput(result, successors);
  return formatter.format(ordered, {
    absolutePath: options.absolutePath,
    successors,
    loadsOf: (t) => environment.loadsOf(t),
    graphFactored: options.graphFactored ?? true,
    graphNodeLimit: options.graphNodeLimit ?? 512,
    graphConditionalEdgesLimit: options.graphConditionalEdgesLimit ?? 4,
  });
}
