/** The query language: lexer, parser, engine and output formatters. */
export { QueryEngine, type QueryOptions } from './engine.js';
export { TargetLoader, QueryEvaluationError, compareLabels, type QueryTarget, type TargetLoaderOptions } from './target-loader.js';
export { resolveTargetPatterns, resolveTargetPattern, isWildcardPattern, type ResolvedTarget, type TargetPatternOptions } from './target-pattern-resolver.js';
export { parseQuery, type QueryExpr } from './parser.js';
export { QuerySyntaxError, tokenize } from './lexer.js';
export { parseTargetPattern, TargetPatternError, type TargetPattern } from './target-pattern.js';
export { OUTPUT_FORMATTERS, type OutputFormatter, type OutputEnvironment } from './output/index.js';
export { orderForOutput } from './output-order.js';
