import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PackageLoader, Workspace } from '../../src/loading/index.js';
import { QueryEvaluationError, resolveTargetPatterns, TargetLoader, TargetPatternError } from '../../src/query/index.js';
import { workspaceFixture } from '../loading/fixture.js';

const WS = {
  WORKSPACE: 'workspace(name = "ws")\n',
  'a/BUILD': [
    'filegroup(name = "fg", srcs = ["x.txt"])',
    'filegroup(name = "hidden", tags = ["manual"])',
    'genrule(name = "g", outs = ["g.out"], cmd = "touch $@")',
    '',
  ].join('\n'),
  'a/x.txt': '',
  'a/b/BUILD': 'filegroup(name = "t")\n',
};

function resolver(root: string, keepGoing = false) {
  const loader = new PackageLoader({ workspace: new Workspace(root, 'ws'), outputBase: join(root, '.ob'), persistent: false });
  const errors: string[] = [];
  return { targets: new TargetLoader(loader, { keepGoing, onError: (m) => errors.push(m) }), errors };
}

const labels = (r: ReturnType<typeof resolveTargetPatterns>) => r.map((t) => `${t.target.label}${t.fromWildcard ? ' (wildcard)' : ''}`);

describe('resolveTargetPatterns', () => {
  it('marks wildcard matches and skips manual rules only there', () => {
    const root = workspaceFixture(WS);
    const { targets } = resolver(root);
    expect(labels(resolveTargetPatterns(['//...'], { targets, excludeManual: true }))).toEqual(['//a:fg (wildcard)', '//a:g (wildcard)', '//a/b:t (wildcard)']);
    expect(labels(resolveTargetPatterns(['//...'], { targets }))).toContain('//a:hidden (wildcard)');
    expect(labels(resolveTargetPatterns(['//a:hidden', '//a:all'], { targets, excludeManual: true }))).toEqual([
      '//a:hidden',
      '//a:fg (wildcard)',
      '//a:g (wildcard)',
    ]);
    // A named target stays named even when a wildcard matched it first.
    expect(labels(resolveTargetPatterns(['//a:all', '//a:fg'], { targets, excludeManual: true }))).toEqual(['//a:fg', '//a:g (wildcard)']);
  });

  it('subtracts negative patterns and resolves relative ones from the offset', () => {
    const root = workspaceFixture(WS);
    const { targets } = resolver(root);
    expect(labels(resolveTargetPatterns(['//...', '-//a/...'], { targets }))).toEqual([]);
    expect(labels(resolveTargetPatterns(['//...', '-//a:all'], { targets }))).toEqual(['//a/b:t (wildcard)']);
    expect(labels(resolveTargetPatterns([':*'], { targets, offset: 'a/b' }))).toEqual(['//a/b:t (wildcard)', '//a/b:BUILD (wildcard)']);
    expect(labels(resolveTargetPatterns(['b:t', '@ws//a:fg'], { targets, offset: 'a' }))).toEqual(['//a/b:t', '//a:fg']);
  });

  it('reports errors: fails fast, or records a partial result with keep_going', () => {
    const root = workspaceFixture(WS);
    expect(() => resolveTargetPatterns(['//a:nope'], { targets: resolver(root).targets })).toThrow(QueryEvaluationError);
    expect(() => resolveTargetPatterns(['///a'], { targets: resolver(root).targets })).toThrow(TargetPatternError);
    const r = resolver(root, true);
    expect(labels(resolveTargetPatterns(['//nope/...', '//a:fg'], { targets: r.targets }))).toEqual(['//a:fg']);
    expect(r.targets.hadErrors).toBe(true);
    expect(r.errors).toEqual(["no targets found beneath 'nope'"]);
  });
});
