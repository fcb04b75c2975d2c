import { UsageError } from '../core/index.js';
import { Label, type PackageLoader } from '../loading/index.js';
import { GENQUERY_FUNCTIONS } from './functions/index.js';
import { OUTPUT_FORMATTERS } from './output/index.js';
import { PackageQueryEnvironment } from './package-query-environment.js';
import { parseQuery } from './parser.js';
import { evaluateQuery } from './query-evaluator.js';
import { parseQueryOptions } from './query-options.js';
import { formatQueryResult } from './query-output.js';
import { ScopedQueryEnvironment } from './scoped-query-environment.js';
import { compareLabels, TargetLoader, type QueryTarget } from './target-loader.js';

/** Options genquery's `opts` may not set: they would change what the scope means or where the query comes from. */
const FORBIDDEN_OPTIONS = ['keep_going', 'query_file', 'universe_scope', 'order_results', 'order_output'];
/** Formatters whose output keeps its graph order; every other output is sorted by label. */
const GRAPH_OUTPUTS = new Set(['graph', 'minrank', 'maxrank']);

export interface GenqueryRequest {
  readonly loader: PackageLoader;
  /** The label of the genquery rule, for messages. */
  readonly rule: string;
  readonly expression: string;
  /** Canonical labels of `scope`. */
  readonly scope: readonly string[];
  readonly strict: boolean;
  readonly opts: readonly string[];
  /** Receives warnings (a strict = False query leaving its scope). */
  readonly warn: (message: string) => void;
}

/**
 * Runs a genquery's query: over the transitive closure of `scope` only, labels from the workspace
 * root, no wildcard patterns, no Sky Query functions (GENQUERY_FUNCTIONS), `opts` as query options
 * (minus FORBIDDEN_OPTIONS). The output is
 * sorted by label except for graph, minrank and maxrank and a top-level somepath (path order).
 * Throws UsageError for bad opts, QuerySyntaxError, QueryEvaluationError (a broken or missing
 * target, a wildcard) and, when strict, ScopeViolationError.
 */
export function evaluateGenquery(request: GenqueryRequest): { output: Uint8Array; format: string } {
  const { options, residue, given } = parseQueryOptions(request.opts);
  const forbidden = given.find((name) => FORBIDDEN_OPTIONS.includes(name));
  if (forbidden !== undefined) throw new UsageError(`option --${forbidden} is not allowed in genquery's opts`);
  if (residue.length > 0) throw new UsageError(`'${residue[0]}' is not an option; genquery's opts takes query options only`);
  const targets = new TargetLoader(request.loader, { keepGoing: false, onWarning: request.warn });
  const packages = new PackageQueryEnvironment(targets, {
    noImplicitDeps: !options.implicitDeps,
    noToolDeps: !options.toolDeps,
    forbidWildcards: `in genquery rule ${request.rule}`,
  });
  const scope = request.scope.map((l) => targets.getTarget(Label.parse(l))).filter((t): t is QueryTarget => t !== undefined);
  const env = new ScopedQueryEnvironment(packages, scope, request.strict);
  const expr = parseQuery(request.expression, GENQUERY_FUNCTIONS);
  const evaluated = [...evaluateQuery(expr, env).values()];
  const keepsOrder = GRAPH_OUTPUTS.has(options.output) || (expr.kind === 'function' && expr.name === 'somepath');
  const result = keepsOrder ? evaluated : evaluated.sort((a, b) => compareLabels(a.label, b.label));
  const output = formatQueryResult(result, OUTPUT_FORMATTERS.get(options.output)!, env, {
    orderOutput: GRAPH_OUTPUTS.has(options.output) ? 'full' : 'no',
    graphFactored: options.graphFactored,
    graphNodeLimit: options.graphNodeLimit,
    graphConditionalEdgesLimit: options.graphConditionalEdgesLimit,
    // genquery output must not depend on where the workspace is: locations are workspace-relative.
    absolutePath: (p) => p,
  });
  return { output: typeof output === 'string' ? Buffer.from(output, 'utf8') : output, format: options.output };
}
