import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandTestSuites, Label, PackageTestSuiteGraph, suiteTagFilter } from '../../src/loading/index.js';
import { loadFixture } from './load-helper.js';

// The suites of the kiln test fixture (also recorded with Bazel), and a few more.
const BUILD = `
${readFileSync(join(import.meta.dirname, '../e2e/test-command/workspace/pkg/BUILD'), 'utf8')}
test_suite(name = "cycle_a", tests = [":cycle_b"])
test_suite(name = "cycle_b", tests = [":cycle_a", ":large"])
sh_binary(name = "bin", srcs = ["pass.sh"])
test_suite(name = "with_binary", tests = [":bin", ":large"])
my_test(name = "starlark_test", tags = ["fast"])
`;
const DEFS = `
def _impl(ctx):
    pass
my_test = rule(implementation = _impl, test = True)
`;

function expand(...names: string[]) {
  const { loader } = loadFixture({ 'pkg/BUILD': `load(":defs.bzl", "my_test")\n${BUILD}`, 'pkg/defs.bzl': DEFS, 'pkg/pass.sh': '' });
  const graph = new PackageTestSuiteGraph(loader);
  const { tests, errors } = expandTestSuites(
    names.map((n) => graph.target(Label.parse(`//pkg:${n}`))),
    graph,
  );
  return { tests: tests.map((t) => t.label.name), errors: errors.map((e) => e.message) };
}

describe('test_suite expansion', () => {
  it('an empty tests means every test rule of the package not tagged manual, Starlark tests included', () => {
    expect(expand('all_implicit').tests).toEqual(['pass_small', 'pass_medium', 'large', 'starlark_test']);
  });
  it('tags filter: positive tags required; size counts as a tag; -tag excludes', () => {
    expect(expand('fast').tests).toEqual(['pass_small', 'pass_medium', 'starlark_test']);
    expect(expand('not_small').tests).toEqual(['pass_medium', 'large', 'starlark_test']);
  });
  it('+tag is a positive tag; a manual test listed by name counts', () => {
    expect(expand('plus').tests).toEqual(['pass_small', 'manual_test']);
  });
  it('nested suites count as already filtered; only directly listed tests are filtered', () => {
    // :large is listed directly and tagged (by size) large: filtered out. :fast and :plus bring small tests, kept.
    expect(expand('nested').tests).toEqual(['pass_small', 'pass_medium', 'starlark_test', 'manual_test']);
  });
  it("a suite's own manual tag filters nothing", () => {
    expect(expand('manual_suite').tests).toEqual(['manual_test']);
  });
  it('suites naming each other expand once', () => {
    expect(expand('cycle_a').tests).toEqual(['large']);
  });
  it('a test rule stands for itself, other targets for nothing', () => {
    expect(expand('large', 'bin', 'large').tests).toEqual(['large']);
  });
  it('a *_binary listed in tests is an error naming the suite and the member; the other tests still expand', () => {
    const r = expand('with_binary');
    expect(r.tests).toEqual(['large']);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toContain('//pkg:with_binary');
    expect(r.errors[0]).toContain('//pkg:bin');
  });
});

describe('suiteTagFilter', () => {
  it('signs are not part of the tag, manual is ignored', () => {
    const f = suiteTagFilter(['+a', '-b', 'manual']);
    expect(f(['a'])).toBe(true);
    expect(f(['a', 'b'])).toBe(false);
    expect(f(['b'])).toBe(false);
    expect(f(['a', '+a'])).toBe(true);
    expect(suiteTagFilter([])(['x'])).toBe(true);
  });
});
