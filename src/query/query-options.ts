import { UsageError } from '../core/index.js';
import { OptionRegistry, type ParsedOptions, parseOptions } from '../core/options/index.js';
import type { OrderOutput } from './output/index.js';
import { OUTPUT_FORMATTERS } from './output/index.js';
import { QUERY_OPTION_DEFINITIONS } from './query-option-definitions.js';
import { parseTargetPattern, TargetPatternError } from './target-pattern.js';

/** The options of `kiln query` (and of genquery's `opts`), with Bazel's names and defaults. */
export interface QueryOptionValues {
  output: string;
  orderOutput: OrderOutput;
  keepGoing: boolean;
  implicitDeps: boolean;
  toolDeps: boolean;
  universeScope: string[];
  queryFile: string | undefined;
  graphFactored: boolean;
  graphNodeLimit: number;
  graphConditionalEdgesLimit: number;
}

const QUERY_OPTIONS = new OptionRegistry(QUERY_OPTION_DEFINITIONS);

/** `--universe_scope`: target patterns (Bazel's), each checked by the one target-pattern parser. */
function universeScopeOf(patterns: readonly string[], written: string): string[] {
  for (const pattern of patterns) {
    try {
      parseTargetPattern(pattern);
    } catch (e) {
      if (!(e instanceof TargetPatternError)) throw e;
      throw new UsageError(`While parsing option ${written}: ${e.message}`, undefined, { cause: e });
    }
  }
  return [...patterns];
}

/** The defaults of query's table. */
export function defaultQueryOptions(): QueryOptionValues {
  return queryOptionsOf(parseOptions(QUERY_OPTIONS, []));
}

export interface ParsedQueryOptions {
  readonly options: QueryOptionValues;
  /** Words that are not options (the query), in order; everything after `--` included. */
  readonly residue: readonly string[];
  /** The names of the options given (`keep_going` for -k and --nokeep_going alike). */
  readonly given: readonly string[];
}

/** Reads query options with the one option parser (Bazel's syntax and words); errors are UsageErrors. */
export function parseQueryOptions(args: readonly string[]): ParsedQueryOptions {
  const parsed = parseOptions(QUERY_OPTIONS, args);
  return { options: queryOptionsOf(parsed), residue: parsed.residue, given: parsed.occurrences.map((o) => o.name) };
}

function queryOptionsOf({ values, occurrences }: ParsedOptions): QueryOptionValues {
  const output = values.getString('output');
  if (!OUTPUT_FORMATTERS.has(output)) throw new UsageError(`Invalid output format '${output}'. Valid values are: ${[...OUTPUT_FORMATTERS.keys()].join(', ')}`);
  // --order_results is the older spelling of --order_output: the later of the two wins.
  const order = occurrences.findLast((o) => o.name === 'order_output' || o.name === 'order_results');
  const orderOutput: OrderOutput = order === undefined ? 'auto' : order.name === 'order_results' ? (order.value ? 'auto' : 'no') : (order.value as OrderOutput);
  const scope = occurrences.findLast((o) => o.name === 'universe_scope');
  return {
    output,
    orderOutput,
    keepGoing: values.getBool('keep_going'),
    implicitDeps: values.getBool('implicit_deps'),
    toolDeps: values.getBool('tool_deps'),
    universeScope: scope === undefined ? [] : universeScopeOf(scope.value as readonly string[], scope.written),
    queryFile: values.getString('query_file') || undefined,
    graphFactored: values.getBool('graph:factored'),
    graphNodeLimit: values.getInt('graph:node_limit'),
    graphConditionalEdgesLimit: values.getInt('graph:conditional_edges_limit'),
  };
}
