import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/core/index.js';
import { PackageLoader, Workspace } from '../../src/loading/index.js';
import { evaluateGenquery, QueryEvaluationError, QuerySyntaxError, ScopeViolationError } from '../../src/query/index.js';
import { workspaceFixture } from '../loading/fixture.js';

const WS = {
  WORKSPACE: '',
  BUILD: 'filegroup(name = "top", srcs = ["//lib:core"])\n',
  'lib/BUILD': [
    'load("//defs:names.bzl", "NAMES")',
    'filegroup(name = "core", srcs = ["z.txt", ":mid"])',
    'filegroup(name = "mid", srcs = ["a.txt"])',
    'filegroup(name = "outside", srcs = [":core"])',
    '',
  ].join('\n'),
  'defs/BUILD': 'exports_files(["base.bzl"])\n',
  'defs/names.bzl': 'load(":base.bzl", "BASE")\nNAMES = BASE\n',
  'defs/base.bzl': 'BASE = []\n',
};

function genquery(expression: string, options: { scope?: string[]; strict?: boolean; opts?: string[] } = {}) {
  const root = workspaceFixture(WS);
  const loader = new PackageLoader({ workspace: new Workspace(root, ''), outputBase: join(root, '.ob'), persistent: false });
  const warnings: string[] = [];
  const run = () =>
    Buffer.from(
      evaluateGenquery({
        loader,
        rule: '//q:q',
        expression,
        scope: options.scope ?? ['//:top'],
        strict: options.strict ?? true,
        opts: options.opts ?? [],
        warn: (m) => warnings.push(m),
      }).output,
    ).toString();
  return { run, warnings };
}

const text = (expression: string, options?: Parameters<typeof genquery>[1]) => genquery(expression, options).run();

describe('evaluateGenquery', () => {
  it('sorts the output by label, except graph outputs and a top-level somepath', () => {
    expect(text('deps(//:top)')).toBe('//:top\n//lib:a.txt\n//lib:core\n//lib:mid\n//lib:z.txt\n');
    expect(text('somepath(//:top, //lib:a.txt)')).toBe('//:top\n//lib:core\n//lib:mid\n//lib:a.txt\n');
    expect(text('deps(//:top) - //lib:z.txt', { opts: ['--output=minrank'] })).toBe('0 //:top\n1 //lib:core\n2 //lib:mid\n3 //lib:a.txt\n');
    expect(text('deps(//lib:mid)', { opts: ['--output=graph'] })).toBe(
      'digraph mygraph {\n  node [shape=box];\n  "//lib:mid"\n  "//lib:mid" -> "//lib:a.txt"\n  "//lib:a.txt"\n}\n',
    );
    expect(text('deps(//:top, 1)', { opts: ['--output', 'label_kind', '--noimplicit_deps'] })).toBe('filegroup rule //:top\nfilegroup rule //lib:core\n');
  });

  it('resolves labels from the workspace root and runs over the scope closure only', () => {
    expect(text(':top')).toBe('//:top\n');
    // rdeps' universe is whatever the query names; the closure of scope bounds it.
    expect(text('rdeps(//:top, //lib:a.txt)')).toBe('//:top\n//lib:a.txt\n//lib:core\n//lib:mid\n');
  });

  // Bazel's genquery finds a package's BUILD file and loads through the package (its query
  // environment's buildfiles/loadfiles never consult the scope's target filter): the files defining
  // the closure's packages are in scope. A loaded .bzl file's BUILD file is added only when its
  // package is one of the closure's (GenQueryPackageProvider.getBaseNameForLoadedPackage knows no
  // other; Bazel 2.1.0 recorded the same, test/e2e/differential/genquery-files).
  it('buildfiles and loadfiles of the closure are in scope', () => {
    const strict = genquery('buildfiles(//:top)');
    expect(strict.run()).toBe('//:BUILD\n');
    expect(strict.warnings).toEqual([]);
    expect(text('buildfiles(deps(//:top))')).toBe('//:BUILD\n//defs:base.bzl\n//defs:names.bzl\n//lib:BUILD\n');
    expect(text('loadfiles(deps(//:top))')).toBe('//defs:base.bzl\n//defs:names.bzl\n');
    expect(text('loadfiles(//:top)')).toBe('');
    expect(text('buildfiles(//lib:mid)', { scope: ['//lib:mid', '//defs:base.bzl'], opts: ['--output=label_kind'] })).toBe(
      'source file //defs:BUILD\nsource file //defs:base.bzl\nsource file //defs:names.bzl\nsource file //lib:BUILD\n',
    );
    // Only the BUILD files reached by buildfiles: naming one is still a target outside the closure.
    expect(() => text('//lib:BUILD')).toThrow("target '//lib:BUILD' is not within the scope");
  });

  // Bazel runs genquery in its plain query environment; allrdeps and rbuildfiles belong to Sky Query
  // (SkyQueryEnvironment.getFunctions), so genquery does not know them.
  it('allrdeps and rbuildfiles are unknown functions', () => {
    expect(() => text('rbuildfiles(lib/BUILD)')).toThrow(QuerySyntaxError);
    expect(() => text('rbuildfiles(lib/BUILD)')).toThrow("unknown function 'rbuildfiles' (column 1)");
    expect(() => text('deps(allrdeps(//lib:mid))')).toThrow("unknown function 'allrdeps' (column 6)");
  });

  it('fails a strict query that leaves the scope; a non-strict one warns and skips', () => {
    expect(() => text('//lib:outside')).toThrow(ScopeViolationError);
    expect(() => text('siblings(//lib:core)')).toThrow("target '//lib:outside' is not within the scope");
    const loose = genquery('siblings(//lib:core) + //lib:outside', { strict: false });
    expect(loose.run()).toBe('//lib:a.txt\n//lib:core\n//lib:mid\n//lib:z.txt\n');
    expect(loose.warnings.sort()).toEqual([
      "target '//lib:BUILD' is not within the scope of the query (the transitive closure of scope); skipped",
      "target '//lib:outside' is not within the scope of the query (the transitive closure of scope); skipped",
    ]);
  });

  it('rejects wildcards, forbidden opts, stray words, bad syntax and missing targets', () => {
    for (const w of ['//lib:all', '//lib:*', '//lib/...', '//...', '//lib:all-targets', 'deps(//lib/...:*)']) {
      expect(() => text(w)).toThrow(QueryEvaluationError);
      expect(() => text(w)).toThrow(/in genquery rule \/\/q:q: wildcard pattern '.*' \(column \d+\) is not allowed/);
    }
    for (const o of [
      '--keep_going',
      '-k',
      '--nokeep_going',
      '--query_file=f',
      '--universe_scope=//...',
      '--order_results',
      '--noorder_results',
      '--order_output=full',
    ]) {
      expect(() => text('//:top', { opts: [o] })).toThrow(UsageError);
      expect(() => text('//:top', { opts: [o] })).toThrow(/option --\w+ is not allowed in genquery's opts/);
    }
    expect(() => text('//:top', { opts: ['//:top'] })).toThrow("'//:top' is not an option");
    expect(() => text('//:top', { opts: ['--output=bogus'] })).toThrow("Invalid output format 'bogus'");
    expect(() => text('//:top', { opts: ['--bogus'] })).toThrow('Unrecognized option: --bogus');
    expect(() => text('deps(//:top')).toThrow(QuerySyntaxError);
    expect(() => text('//lib:nope')).toThrow("no such target '//lib:nope'");
    expect(() => text('//:top', { scope: ['//lib:nope'] })).toThrow("no such target '//lib:nope'");
  });
});
