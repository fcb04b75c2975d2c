import { describe, expect, it } from 'vitest';
import { Label, LabelSyntaxError, validatePackageName, validateTargetName } from '../../src/loading/label.js';

const ctx = { repo: '', pkg: 'foo/bar' };

describe('Label.parse', () => {
  it.each([
    ['//pkg:name', '', 'pkg', 'name', '//pkg:name'],
    ['//pkg/sub', '', 'pkg/sub', 'sub', '//pkg/sub:sub'],
    ['//:root', '', '', 'root', '//:root'],
    ['@repo//pkg:name', 'repo', 'pkg', 'name', '@repo//pkg:name'],
    ['@@canon+//pkg:x', 'canon+', 'pkg', 'x', '@canon+//pkg:x'],
    ['@//pkg:name', '', 'pkg', 'name', '//pkg:name'],
    ['@platforms', 'platforms', '', 'platforms', '@platforms//:platforms'],
    ['@platforms//os:linux', 'platforms', 'os', 'linux', '@platforms//os:linux'],
    [':name', '', 'foo/bar', 'name', '//foo/bar:name'],
    ['name', '', 'foo/bar', 'name', '//foo/bar:name'],
    ['dir/file.txt', '', 'foo/bar', 'dir/file.txt', '//foo/bar:dir/file.txt'],
    ['//pkg:a/b.c', '', 'pkg', 'a/b.c', '//pkg:a/b.c'],
    ['//pkg:.', '', 'pkg', '.', '//pkg:.'],
  ])('%s', (raw, repo, pkg, name, printed) => {
    const l = Label.parse(raw, ctx);
    expect([l.repo, l.pkg, l.name]).toEqual([repo, pkg, name]);
    expect(l.toString()).toBe(printed);
  });

  it('takes the repository of the context for //-labels', () => {
    expect(Label.parse('//x:y', { repo: 'ext', pkg: 'a' }).toString()).toBe('@ext//x:y');
    expect(Label.parse(':y', { repo: 'ext', pkg: 'a' }).toString()).toBe('@ext//a:y');
  });

  it('interns labels parsed in the same context', () => {
    expect(Label.parse('//a:b')).toBe(Label.parse('//a:b'));
    expect(Label.parse('//a:b').equals(Label.inPackage({ repo: '', pkg: 'a' }, 'b'))).toBe(true);
  });

  // Expected messages follow Bazel's LabelValidator.java and the label tests in bazelbuild/bazel
  // (LabelTest.java): "invalid package name '...': <reason>", "invalid target name '...': <reason>".
  it.each([
    ['//a/../b', "invalid package name 'a/../b': package name component contains only '.' characters (perhaps you meant \":b\"?)"],
    ['//a/../b:c', "invalid package name 'a/../b': package name component contains only '.' characters"],
    ['//a/./b:c', "invalid package name 'a/./b': package name component contains only '.' characters"],
    ['//a:b:c', "invalid target name 'b:c': target names may not contain ':'"],
    ['a:b:c', "invalid target name 'b:c': target names may not contain ':'"],
    ['//a/:b', "invalid package name 'a/': package names may not end with '/'"],
    ['//a//b:c', "invalid package name 'a//b': package names may not contain '//' path separators"],
    ['///a:b', "invalid package name '/a': package names may not start with '/'"],
    ['//a:', "invalid target name '': empty target name"],
    [':', "invalid target name '': empty target name"],
    ['', "invalid target name '': empty target name"],
    ['//a:b/', "invalid target name 'b/': target names may not end with '/'"],
    ['//a:b//c', "invalid target name 'b//c': target names may not contain '//' path separators"],
    ['//a:../b', "invalid target name '../b': target names may not contain up-level references '..'"],
    ['//a:b/../c', "invalid target name 'b/../c': target names may not contain up-level references '..'"],
    ['//a:./b', "invalid target name './b': target names may not contain '.' as a path segment"],
    ['/a', "invalid target name '/a': target names may not start with '/'"],
    ['//a:b\\c', "invalid target name 'b\\c': target names may not contain '\\'"],
    ['//a:b\u0001', "invalid target name 'b\u0001': target names may not contain non-printable characters: '\\x01'"],
    ['//a:b\r', "invalid target name 'b\r': target names may not end with carriage returns (perhaps the input source is CRLF-terminated)"],
    ['//a\tb:c', expect.stringContaining("invalid package name 'a\tb': package names may contain A-Z, a-z, 0-9")],
    ['//...', "invalid label '//...': package name cannot contain '...'"],
    ['@bad repo//a:b', expect.stringContaining("invalid repository name '@bad repo'")],
  ])('rejects %j', (raw, message) => {
    let err: unknown;
    try {
      Label.parse(raw, ctx);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LabelSyntaxError);
    expect((err as Error).message).toEqual(message);
  });

  it('needs a context for relative labels', () => {
    expect(() => Label.parse(':x')).toThrow(/needs a current package/);
  });
});

describe('paths of a label', () => {
  it.each([
    ['//a/b:c.txt', 'a/b', 'a/b/c.txt', 'a/b/c.txt'],
    ['//:top.txt', '', 'top.txt', 'top.txt'],
    ['@r//a:x', 'external/r/a', 'external/r/a/x', '../r/a/x'],
    ['@r//:x', 'external/r', 'external/r/x', '../r/x'],
  ])('%s: package %s, exec path %s, runfiles path %s', (raw, packageExecPath, execPath, runfilesPath) => {
    const label = Label.parse(raw);
    expect([label.packageExecPath, label.execPath, label.runfilesPath]).toEqual([packageExecPath, execPath, runfilesPath]);
  });
});

describe('validators', () => {
  it('accepts the root package and ordinary names', () => {
    expect(validatePackageName('')).toBeNull();
    expect(validatePackageName('a-b/c_d/e.f')).toBeNull();
    expect(validateTargetName('lib+x,y=z~@_-')).toBeNull();
    expect(validateTargetName('a/.')).toBeNull();
  });
});
