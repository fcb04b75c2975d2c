import { allpathsFunction } from './allpaths-function.js';
import { allrdepsFunction } from './allrdeps-function.js';
import { attrFunction } from './attr-function.js';
import { buildfilesFunction, loadfilesFunction } from './buildfiles-function.js';
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
