import { describe, expect, it } from 'vitest';
import { DirectoryLister } from '../../src/loading/directory-lister.js';
import { checkGlobPattern, glob, globPatternMatches, type GlobOptions } from '../../src/loading/glob.js';
import { Workspace } from '../../src/loading/workspace.js';
import { workspaceFixture } from './fixture.js';

function globIn(root: string, options: GlobOptions, listings?: string[]): string[] {
  return glob({ lister: new DirectoryLister(), packageDir: root, onListing: (d) => listings?.push(d) }, options);
}

const tree = {
  BUILD: '',
  'a.txt': '',
  'b.txt': '',
  '.hidden.txt': '',
  'c.cc': '',
  'sub/d.txt': '',
  'sub/deep/e.txt': '',
  'sub/deep/f.cc': '',
  'pkg/BUILD': '',
  'pkg/g.txt': '',
  'empty/': '',
};

describe('glob', () => {
  it('matches * and ? within one segment, sorted and relative to the package', () => {
    const root = workspaceFixture(tree);
    expect(globIn(root, { include: ['*.txt'] })).toEqual(['.hidden.txt', 'a.txt', 'b.txt']);
    expect(globIn(root, { include: ['?.txt', 'a.*'] })).toEqual(['a.txt', 'b.txt']);
  });

  it('** matches zero or more segments and stops at subpackages', () => {
    const root = workspaceFixture(tree);
    expect(globIn(root, { include: ['**/*.txt'] })).toEqual(['.hidden.txt', 'a.txt', 'b.txt', 'sub/d.txt', 'sub/deep/e.txt']);
    expect(globIn(root, { include: ['sub/**/*.cc'] })).toEqual(['sub/deep/f.cc']);
    expect(globIn(root, { include: ['**'] })).not.toContain('pkg/g.txt');
  });

  it('excludes, deduplicates, and returns directories only with exclude_directories = 0', () => {
    const root = workspaceFixture(tree);
    expect(globIn(root, { include: ['**/*.txt', '*.txt'], exclude: ['sub/**', 'b.txt'] })).toEqual(['.hidden.txt', 'a.txt']);
    expect(globIn(root, { include: ['*'] })).toEqual(['.hidden.txt', 'BUILD', 'a.txt', 'b.txt', 'c.cc']);
    // Subpackage directories are never results; other directories are with exclude_directories = 0.
    expect(globIn(root, { include: ['*'], excludeDirectories: false })).toEqual(['.hidden.txt', 'BUILD', 'a.txt', 'b.txt', 'c.cc', 'empty', 'sub']);
    expect(globIn(root, { include: ['sub/**'], excludeDirectories: false })).toEqual(['sub', 'sub/d.txt', 'sub/deep', 'sub/deep/e.txt', 'sub/deep/f.cc']);
  });

  it("never sees the workspace's convenience symlinks, only a real directory of that name", () => {
    const root = workspaceFixture({ ...tree, 'out/x.txt': '', 'kiln-bin': '@link:out', 'kiln-out/y.txt': '' });
    const { lister } = new Workspace(root, '');
    const rootGlob = (include: string[]) => glob({ lister, packageDir: root, onListing: () => {} }, { include });
    expect(rootGlob(['**/x.txt'])).toEqual(['out/x.txt']);
    expect(rootGlob(['kiln-*/*.txt'])).toEqual(['kiln-out/y.txt']);
  });

  it('follows symlinks to files and directories, ignores dangling ones', () => {
    const root = workspaceFixture({ ...tree, 'link.txt': '@link:a.txt', linkdir: '@link:sub', 'dangling.txt': '@link:nope' });
    expect(globIn(root, { include: ['*.txt'] })).toEqual(['.hidden.txt', 'a.txt', 'b.txt', 'link.txt']);
    expect(globIn(root, { include: ['linkdir/**/*.cc'] })).toEqual(['linkdir/deep/f.cc']);
  });

  it('stays finite on a symlink loop', () => {
    const root = workspaceFixture({ 'x/a.txt': '', 'x/loop': '@link:..' });
    expect(globIn(root, { include: ['x/*.txt'] })).toEqual(['x/a.txt']);
    // A link back to an ancestor is not entered (Bazel: infinite symlink expansion).
    expect(globIn(root, { include: ['**/a.txt'] })).toEqual(['x/a.txt']);
  });

  it('records the listings it read', () => {
    const root = workspaceFixture(tree);
    const listings: string[] = [];
    globIn(root, { include: ['sub/*.txt'] }, listings);
    expect(listings).toEqual(['', 'sub']);
  });

  it('enforces allow_empty = False (Bazel wording)', () => {
    const root = workspaceFixture(tree);
    expect(() => globIn(root, { include: ['*.java'], allowEmpty: false })).toThrow(
      "glob pattern '*.java' didn't match anything, but allow_empty is set to False",
    );
    expect(() => globIn(root, { include: ['a.txt'], exclude: ['*'], allowEmpty: false })).toThrow('all files in the glob have been excluded');
    expect(globIn(root, { include: ['*.java'] })).toEqual([]);
  });

  // Messages from Bazel's UnixGlob.checkPatternForError.
  it.each([
    ['', 'pattern cannot be empty'],
    ['/abs/*.txt', 'pattern cannot be absolute'],
    ['a//b', 'empty segment not permitted'],
    ['../x', "segment '..' not permitted"],
    ['a/./b', "segment '.' not permitted"],
    ['a**/b', 'recursive wildcard must be its own segment'],
  ])('rejects %j', (pattern, reason) => {
    expect(checkGlobPattern(pattern)).toBe(reason);
    const root = workspaceFixture(tree);
    expect(() => globIn(root, { include: [pattern] })).toThrow(`glob pattern '${pattern}': ${reason}`);
  });

  it('matches whole paths with ** in any position', () => {
    expect(globPatternMatches('a/**/b', 'a/b')).toBe(true);
    expect(globPatternMatches('a/**/b', 'a/x/y/b')).toBe(true);
    expect(globPatternMatches('**', 'a/b')).toBe(true);
    expect(globPatternMatches('*.cc', 'a/b.cc')).toBe(false);
  });
});
