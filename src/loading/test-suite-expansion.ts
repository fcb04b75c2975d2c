/**
 * test_suite expansion, one definition for `kiln test` and query's `tests()`: which tests a set of
 * targets stands for. Generic over the caller's target type; the caller says what a target is.
 *
 * Rules (the rules spec, section test_suite, and Bazel's TestsForTargetPatternFunction):
 * - a test rule stands for itself; any other target that is not a test_suite stands for nothing;
 * - a suite's `tests` may name suites and test rules of any kind; anything else (a `*_binary`, a
 *   filegroup) is an error naming both labels;
 * - an empty `tests` means every test rule of the suite's package not tagged `manual`;
 * - the suite's `tags` filter the tests it lists directly (or its package's tests): `-tag` excludes,
 *   `+tag` and `tag` are required, a test's size counts as a tag, and the suite's own `manual` is no
 *   filter; tests reached through a nested suite were filtered by that suite and are kept as they are.
 */
export interface TestSuiteGraph<T> {
  /** Canonical label, for messages and de-duplication. */
  labelOf(t: T): string;
  isTestRule(t: T): boolean;
  isTestSuite(t: T): boolean;
  /** The `tags` of a rule (empty for other targets). */
  tagsOf(t: T): readonly string[];
  /** A test rule's `size` (`medium` when not set). */
  sizeOf(t: T): string;
  /** The targets a suite's `tests` names, in order. */
  listedTests(suite: T): readonly T[];
  /** The rules of the suite's package, in declaration order (for an empty `tests`). */
  packageRules(suite: T): readonly T[];
}

/** A suite naming something that is neither a test nor a test_suite. */
export interface TestSuiteError {
  readonly suite: string;
  readonly member: string;
  /** Bazel's message. */
  readonly message: string;
}

/** The tests `targets` stand for, each once, in first-reached order; `errors` lists illegal suite members. */
export function expandTestSuites<T>(targets: Iterable<T>, graph: TestSuiteGraph<T>): { tests: T[]; errors: TestSuiteError[] } {
  const tests = new Map<string, T>();
  const errors: TestSuiteError[] = [];
  const expanded = new Set<string>();
  const visit = (t: T): void => {
    if (graph.isTestRule(t)) {
      if (!tests.has(graph.labelOf(t))) tests.set(graph.labelOf(t), t);
      return;
    }
    if (!graph.isTestSuite(t)) return;
    const suite = graph.labelOf(t);
    if (expanded.has(suite)) return;
    expanded.add(suite);
    const filter = suiteTagFilter(graph.tagsOf(t));
    const listed = graph.listedTests(t);
    const members = listed.length > 0 ? listed : graph.packageRules(t).filter((r) => graph.isTestRule(r) && !graph.tagsOf(r).includes('manual'));
    for (const m of members) {
      if (graph.isTestSuite(m)) visit(m);
      else if (!graph.isTestRule(m)) {
        const member = graph.labelOf(m);
        errors.push({ suite, member, message: `in test_suite rule '${suite}': expecting a test or a test_suite rule but '${member}' is not one.` });
      } else if (filter([...graph.tagsOf(m), graph.sizeOf(m)])) visit(m);
    }
  };
  for (const t of targets) visit(t);
  return { tests: [...tests.values()], errors };
}

/**
 * A tag list as a filter over a test's tags (its size included): every positive tag (`tag` or `+tag`)
 * present and no negative one (`-tag`). `manual` marks the suite itself and filters nothing.
 */
export function suiteTagFilter(tags: readonly string[]): (testTags: readonly string[]) => boolean {
  const { required, excluded } = splitTagFilter(tags.filter((t) => t !== 'manual'));
  return (testTags) => required.every((t) => testTags.includes(t)) && !excluded.some((t) => testTags.includes(t));
}

/** `+a`, `a` → required `a`; `-b` → excluded `b` (the sign is never part of the tag). */
export function splitTagFilter(tags: readonly string[]): { required: string[]; excluded: string[] } {
  const required: string[] = [];
  const excluded: string[] = [];
  for (const t of tags) {
    if (t.startsWith('-')) excluded.push(t.slice(1));
    else required.push(t.startsWith('+') ? t.slice(1) : t);
  }
  return { required, excluded };
}
