/** The query language: target patterns, lexer, parser, functions, evaluation and output formatters. */
export { QueryEngine, type QueryOptions } from './engine.js';
export { parseQuery, type QueryExpr, type QueryArgument, type SetOperator } from './parser.js';
export { QuerySyntaxError, tokenize, type Token, type TokenKind } from './lexer.js';
export { parseTargetPattern, TargetPatternError, type TargetPattern } from './target-pattern.js';
export { TargetLoader, QueryEvaluationError, compareLabels, type QueryTarget, type TargetLoaderOptions } from './target-loader.js';
export { resolveTargetPatterns, resolveTargetPattern, isWildcardPattern, type ResolvedTarget, type TargetPatternOptions } from './target-pattern-resolver.js';
export type { QueryEnvironment, TargetSet, AttributeView } from './query-environment.js';
export { PackageQueryEnvironment, type PackageQueryOptions } from './package-query-environment.js';
export { evaluateQuery } from './query-evaluator.js';
export {
  QUERY_FUNCTIONS,
  CONFIGURED_QUERY_FUNCTIONS,
  ACTION_QUERY_FUNCTIONS,
  actionFiltersOf,
  type ActionFilter,
  type ActionFilterKind,
  type ConfigurationLookup,
  type QueryFunction,
  type ArgumentType,
} from './functions/index.js';
export { OUTPUT_FORMATTERS, targetMessage, type OutputFormatter, type OutputEnvironment, type OrderOutput } from './output/index.js';
export { formatQueryResult, type QueryOutputOptions, type ResultGraphSource } from './query-output.js';
export { ScopedQueryEnvironment, ScopeViolationError } from './scoped-query-environment.js';
export { orderForOutput } from './output-order.js';
export { parseQueryOptions, defaultQueryOptions, type QueryOptionValues, type ParsedQueryOptions } from './query-options.js';
export { QUERY_OPTION_DEFINITIONS, COMMON_QUERY_OPTION_DEFINITIONS } from './query-option-definitions.js';
export { evaluateGenquery, type GenqueryRequest } from './genquery-evaluation.js';
export { visibilityGrants, type PackageGroupLookup, type PackageGroupSpecs } from './target-visibility.js';
