import { QueryEvaluationError } from '../target-loader.js';
import { ACTION_FILTER_FUNCTIONS } from './action-filter-functions.js';
import { allpathsFunction } from './allpaths-function.js';
import { allrdepsFunction } from './allrdeps-function.js';
import { attrFunction } from './attr-function.js';
import { buildfilesFunction, loadfilesFunction } from './buildfiles-function.js';
import { configFunction } from './config-function.js';
import { depsFunction } from './deps-function.js';
import { filterFunction } from './filter-function.js';
import { kindFunction } from './kind-function.js';
import { labelsFunction } from './labels-function.js';
import type { QueryFunction } from './query-function.js';
import { rbuildfilesFunction } from './rbuildfiles-function.js';
import { rdepsFunction } from './rdeps-function.js';
import { samePkgDirectRdepsFunction } from './same-pkg-direct-rdeps-function.js';
import { siblingsFunction } from './siblings-function.js';
import { someFunction } from './some-function.js';
import { somepathFunction } from './somepath-function.js';
import { testsFunction } from './tests-function.js';
import { visibleFunction } from './visible-function.js';

export type { ArgumentType, QueryContext, QueryFunction } from './query-function.js';
export type { ConfigurationLookup } from './config-function.js';
export { actionFiltersOf, type ActionFilter, type ActionFilterKind } from './action-filter-functions.js';

/** Every function of the query language by name (`set(...)` is syntax, see the parser). */
export const QUERY_FUNCTIONS: ReadonlyMap<string, QueryFunction> = new Map(
  [
    depsFunction,
    rdepsFunction,
    allrdepsFunction,
    somepathFunction,
    allpathsFunction,
    kindFunction,
    filterFunction,
    attrFunction,
    labelsFunction,
    testsFunction,
    buildfilesFunction,
    loadfilesFunction,
    rbuildfilesFunction,
    siblingsFunction,
    samePkgDirectRdepsFunction,
    visibleFunction,
    someFunction,
  ].map((f) => [f.name, f]),
);

/**
 * The functions of genquery's query: Bazel runs it in its plain query environment, never Sky Query,
 * so allrdeps and rbuildfiles (Sky Query's own) are unknown functions there.
 */
export const GENQUERY_FUNCTIONS: ReadonlyMap<string, QueryFunction> = new Map(
  [...QUERY_FUNCTIONS].filter(([name]) => name !== allrdepsFunction.name && name !== rbuildfilesFunction.name),
);

/**
 * A function of query that reads the loaded packages rather than the configured graph: cquery
 * parses it and fails when it runs, in Bazel's words.
 */
function notConfigured(fn: QueryFunction): QueryFunction {
  return {
    ...fn,
    evaluate: () => {
      throw new QueryEvaluationError(`${fn.name}() doesn't make sense for the configured target graph`);
    },
  };
}

/**
 * The functions of cquery (Bazel's ConfiguredTargetQueryEnvironment): query's, plus `config()`;
 * buildfiles, loadfiles, rbuildfiles, siblings and visible read packages, not configured targets,
 * and fail when evaluated.
 */
export const CONFIGURED_QUERY_FUNCTIONS: ReadonlyMap<string, QueryFunction> = new Map([
  ...[...QUERY_FUNCTIONS].map(([name, fn]): [string, QueryFunction] => [
    name,
    [buildfilesFunction, loadfilesFunction, rbuildfilesFunction, siblingsFunction, visibleFunction].includes(fn) ? notConfigured(fn) : fn,
  ]),
  [configFunction.name, configFunction],
]);

/** aquery's functions: cquery's and the action filters (`mnemonic`, `inputs`, `outputs`). */
export const ACTION_QUERY_FUNCTIONS: ReadonlyMap<string, QueryFunction> = new Map([
  ...CONFIGURED_QUERY_FUNCTIONS,
  ...ACTION_FILTER_FUNCTIONS.map((f): [string, QueryFunction] => [f.name, f]),
]);
