import { expandTestSuites, type TestSuiteGraph } from '../../loading/index.js';
import type { QueryArgument } from '../parser.js';
import type { QueryEnvironment, TargetSet } from '../query-environment.js';
import { expressionArg, type QueryContext, type QueryFunction } from './query-function.js';

/**
 * `tests(x)`: the test rules of x, with every test_suite of x replaced by the tests it stands for,
 * by loading's `expandTestSuites` (the definition `kiln test` uses too): its `tests` (a test named
 * there counts even when tagged manual), or, when empty, the package's test rules not tagged manual;
 * each suite's `tags` filter the tests it lists (`-tag` excludes, `+tag` requires, a size counts as a
 * tag, the suite's own `manual` is no filter); nested suites expand with their own tags.
 */
export const testsFunction: QueryFunction = {
  name: 'tests',
  argumentTypes: ['expression'],
  mandatoryArguments: 1,
  evaluate: tests,
};

function tests<T>(ctx: QueryContext<T>, args: readonly QueryArgument[]): TargetSet<T> {
  const env = ctx.env;
  const { tests, errors } = expandTestSuites(expressionArg(ctx, args, 0).values(), suiteGraph(env));
  for (const e of errors) env.fail(`The label '${e.member}' in the test_suite '${e.suite}' does not refer to a test or test_suite rule!`);
  const out: TargetSet<T> = new Map();
  for (const t of tests) out.set(env.keyOf(t), t);
  return out;
}

/** The query environment as test_suite expansion reads it. */
function suiteGraph<T>(env: QueryEnvironment<T>): TestSuiteGraph<T> {
  return {
    labelOf: (t) => env.labelOf(t),
    isTestRule: (t) => env.isTestRule(t),
    isTestSuite: (t) => env.isTestSuite(t),
    tagsOf: (t) => stringList(env, t, 'tags'),
    sizeOf: (t) => stringList(env, t, 'size')[0] ?? 'medium',
    listedTests: (suite) => [...env.attributeTargets(suite, 'tests')],
    // The package's test rules not tagged manual: what expansion keeps of the package's rules anyway.
    packageRules: (suite) => [...env.implicitTests(suite)],
  };
}

function stringList<T>(env: QueryEnvironment<T>, t: T, attribute: string): string[] {
  const v = env.attribute(t, attribute)?.values[0];
  if (typeof v === 'string') return [v];
  return Array.isArray(v) ? (v as string[]).filter((x) => typeof x === 'string') : [];
}
