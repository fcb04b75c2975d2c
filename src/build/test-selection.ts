import { UsageError } from '../core/index.js';
import { expandTestSuites, Label, PackageTestSuiteGraph, splitTagFilter, type LoadedTarget, type PackageLoader } from '../loading/index.js';

/** A target named by the command line (after pattern expansion). */
interface NamedTarget {
  readonly label: string;
  /** Matched by a wildcard: skipped when incompatible with the platform. */
  readonly fromWildcard: boolean;
}

/** `--build_tag_filters`, `--test_tag_filters`, `--test_size_filters`, `--build_tests_only`. */
interface TestFilters {
  /** Applied to the named targets (a test_suite by its own tags, not its members'), as Bazel's target pattern phase does. */
  readonly buildTagFilters: readonly string[];
  /** `kiln test`: the tests selected to run are built even when the build tag filters drop them. */
  readonly runsTests: boolean;
  readonly tagFilters: readonly string[];
  readonly sizeFilters: readonly string[];
  readonly buildTestsOnly: boolean;
}

/** What `kiln build` and `kiln test` do with the named targets once test_suites are expanded. */
interface TestSelection {
  /** The targets to build: every named target but test_suites, then the tests they stand for. */
  readonly build: readonly NamedTarget[];
  /** The tests to run (`kiln test`), in order, after the filters. */
  readonly tests: readonly string[];
  /** Illegal test_suite members, with the suite's position. */
  readonly errors: readonly { readonly message: string; readonly suite: LoadedTarget }[];
}

const SIZES = ['small', 'medium', 'large', 'enormous'];

/** Checks `--test_size_filters` values (Bazel's message); throws UsageError. */
export function checkSizeFilters(filters: readonly string[]): void {
  for (const f of filters) {
    const size = f.startsWith('-') ? f.slice(1) : f;
    if (!SIZES.includes(size))
      throw new UsageError(`While parsing option --test_size_filters=${filters.join(',')}: Only small, medium, large, enormous are allowed test sizes`);
  }
}

/**
 * Expands test_suites among the named targets (a suite itself builds nothing; the tests it stands
 * for are built and, for `kiln test`, run) and applies the test filters, as Bazel's target pattern
 * phase does: a test is run when it has one of the positive `--test_tag_filters` (if any) and none of
 * the negative ones, and its size passes `--test_size_filters` the same way. Filtered-out tests are
 * still built unless `--build_tests_only`, which also drops every named target that is not a test.
 * `--build_tag_filters` drops named rules by their tags (files always pass); the tests `kiln test`
 * runs are built whatever it says (Bazel merges the tests to run back into the targets to build).
 */
export function selectTests(loader: PackageLoader, named: readonly NamedTarget[], filters: TestFilters): TestSelection {
  const graph = new PackageTestSuiteGraph(loader);
  const build = new Map<string, NamedTarget>();
  const tests = new Set<string>();
  const errors: { message: string; suite: LoadedTarget }[] = [];
  const tagFilter = anyOfFilter(filters.tagFilters);
  const sizeFilter = anyOfFilter(filters.sizeFilters);
  const buildTagFilter = anyOfFilter(filters.buildTagFilters);
  for (const n of named) {
    const t = graph.target(Label.parse(n.label));
    const buildable = t.target.kind !== 'rule' || buildTagFilter(graph.tagsOf(t));
    if (!graph.isTestRule(t) && !graph.isTestSuite(t)) {
      if (!filters.buildTestsOnly && buildable) build.set(n.label, n);
      continue;
    }
    const expanded = expandTestSuites([t], graph);
    for (const e of expanded.errors) errors.push({ message: e.message, suite: graph.target(Label.parse(e.suite)) });
    for (const test of expanded.tests) {
      const label = graph.labelOf(test);
      const selected = tagFilter(graph.tagsOf(test)) && sizeFilter([graph.sizeOf(test)]);
      if (selected) tests.add(label);
      const built = filters.buildTestsOnly ? selected : buildable || (selected && filters.runsTests);
      if (built && !build.has(label)) build.set(label, { label, fromWildcard: n.fromWildcard });
    }
  }
  return { build: [...build.values()], tests: [...tests], errors };
}

/** Bazel's test filter: at least one positive entry present (when there are any), no negative one. */
function anyOfFilter(entries: readonly string[]): (values: readonly string[]) => boolean {
  const { required, excluded } = splitTagFilter(entries);
  return (values) => (required.length === 0 || required.some((t) => values.includes(t))) && !excluded.some((t) => values.includes(t));
}
