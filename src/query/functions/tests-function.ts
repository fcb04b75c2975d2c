import type { QueryArgument } from '../parser.js';
import type { QueryEnvironment, TargetSet } from '../query-environment.js';
import { expressionArg, type QueryContext, type QueryFunction } from './query-function.js';

/**
 * `tests(x)`: the test rules of x, with every test_suite of x replaced by the tests it stands for:
 * its `tests` (a test named there counts even when tagged manual), or, when empty, the package's
 * test rules not tagged manual; each suite's `tags` filter its own tests (`-tag` excludes, a size
 * counts as a tag; the suite's own `manual` is no filter). Nested suites expand with their own tags.
 */
export const testsFunction: QueryFunction = {
  name: 'tests',
  argumentTypes: ['expression'],
  mandatoryArguments: 1,
  evaluate: tests,
};

function tests<T>(ctx: QueryContext<T>, args: readonly QueryArgument[]): TargetSet<T> {
  const env = ctx.env;
  const out: TargetSet<T> = new Map();
  const expanded = new Set<string>();
  const pending: T[] = [];
  for (const t of expressionArg(ctx, args, 0).values()) {
    if (env.isTestRule(t)) out.set(env.keyOf(t), t);
    else if (env.isTestSuite(t)) pending.push(t);
  }
  while (pending.length > 0) {
    const suite = pending.pop()!;
    const key = env.keyOf(suite);
    if (expanded.has(key)) continue;
    expanded.add(key);
    const filter = tagFilter(stringList(env, suite, 'tags').filter((tag) => tag !== 'manual'));
    const named = [...env.attributeTargets(suite, 'tests')];
    for (const t of named.length > 0 ? named : env.implicitTests(suite)) {
      if (env.isTestSuite(t)) pending.push(t);
      else if (!env.isTestRule(t)) {
        env.fail(`The label '${env.labelOf(t)}' in the test_suite '${env.labelOf(suite)}' does not refer to a test or test_suite rule!`);
      } else if (filter([...stringList(env, t, 'tags'), ...stringList(env, t, 'size')])) out.set(env.keyOf(t), t);
    }
  }
  return out;
}

function stringList<T>(env: QueryEnvironment<T>, t: T, attribute: string): string[] {
  const v = env.attribute(t, attribute)?.values[0];
  if (typeof v === 'string') return [v];
  return Array.isArray(v) ? (v as string[]).filter((x) => typeof x === 'string') : [];
}

/** A suite's tags as a filter: every positive tag required, no negative (`-tag`) one present. */
function tagFilter(tags: readonly string[]): (testTags: readonly string[]) => boolean {
  const required = tags.filter((t) => !t.startsWith('-'));
  const excluded = tags.filter((t) => t.startsWith('-')).map((t) => t.slice(1));
  return (testTags) => required.every((t) => testTags.includes(t)) && !excluded.some((t) => testTags.includes(t));
}
