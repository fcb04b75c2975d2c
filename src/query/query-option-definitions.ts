import type { OptionDefinition } from '../core/options/index.js';

/**
 * The options query, cquery and aquery share (Bazel's CommonQueryOptions), with Bazel's names,
 * defaults and help.
 */
export const COMMON_QUERY_OPTION_DEFINITIONS: readonly OptionDefinition[] = [
  {
    name: 'universe_scope',
    type: 'list',
    default: [],
    allowMultiple: false,
    converter: 'comma',
    help: 'A comma-separated set of target patterns: the universe the query searches; the patterns of the expression when empty.',
  },
  { name: 'implicit_deps', type: 'bool', default: true, help: 'Follow dependencies the BUILD file did not write (attribute defaults).' },
  { name: 'tool_deps', type: 'bool', default: true, help: 'Follow dependencies into the exec configuration (tools).' },
  { name: 'query_file', type: 'string', default: '', help: 'Read the query from this file instead of the command line.' },
];

/** `kiln query`'s table (Bazel's QueryOptions), also genquery's `opts`. */
export const QUERY_OPTION_DEFINITIONS: readonly OptionDefinition[] = [
  ...COMMON_QUERY_OPTION_DEFINITIONS,
  { name: 'output', type: 'string', default: 'label', help: 'The format of the results: label, label_kind, build, package, location, graph, xml, proto, ...' },
  {
    name: 'order_output',
    type: 'string',
    default: 'auto',
    allowed: { values: ['no', 'deps', 'auto', 'full'], describe: 'order output mode' },
    help: 'Output order: no (none), deps (dependencies first), auto (deps for graph formats, else lexicographic) or full (total, stable order).',
  },
  { name: 'order_results', type: 'bool', default: true, help: 'Deprecated: --noorder_results is --order_output=no, --order_results is --order_output=auto.' },
  { name: 'keep_going', abbrev: 'k', type: 'bool', default: false, help: 'Answer with what can be computed when some targets fail to load.' },
  { name: 'graph:factored', type: 'bool', default: true, help: 'With --output=graph: nodes with the same neighbours are merged into one.' },
  { name: 'graph:node_limit', type: 'int', default: 512, help: 'With --output=graph: the longest label a node shows; -1 for no limit.' },
  {
    name: 'graph:conditional_edges_limit',
    type: 'int',
    default: 4,
    help: 'With --output=graph: how many conditions an edge lists; -1 for no limit.',
  },
];
