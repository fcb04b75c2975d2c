import { describe, expect, it } from 'vitest';
import { errorsOf, loadFixture } from './load-helper.js';

/** Loads `//a` (its BUILD loads `//b:lib.bzl`, which declares `decl`) and returns its errors. */
function loadA(decl: string, from = 'a', extra: Record<string, string> = {}): string[] {
  return errorsOf(
    loadFixture(
      {
        [`${from}/BUILD`]: 'load("//b:lib.bzl", "X")\n\nfilegroup(name = "f")\n',
        'b/BUILD': '',
        'b/lib.bzl': `${decl}\nX = 1\n`,
        ...extra,
      },
      from,
    ).pkg,
  );
}

describe('load visibility (visibility() in .bzl files)', () => {
  it('allows and refuses loads as Bazel does', () => {
    // Each row: the declaration, the loading package, whether Bazel allows it (BzlLoadFunctionTest).
    const rows: [string, string, boolean][] = [
      ['', 'a', true],
      ['visibility("public")', 'a', true],
      ['visibility("private")', 'a', false],
      ['visibility([])', 'a', false],
      ['visibility(["//a"])', 'a', true],
      ['visibility("//a")', 'a', true],
      ['visibility(["//c"])', 'a', false],
      ['visibility(["//a"])', 'a/sub', false],
      ['visibility(["//a/..."])', 'a/sub', true],
      ['visibility(["//a/..."])', 'a', true],
      ['visibility(["//a/..."])', 'ab', false],
      ['visibility(["//..."])', 'a', true],
      ['visibility(["public", "//c"])', 'a', true],
      ['visibility(["private", "//a"])', 'a', true],
      ['visibility(["private", "//c"])', 'a', false],
      // Present-day Bazel's package_group forms.
      ['visibility(["//a:__pkg__"])', 'a', true],
      ['visibility(["//a:__pkg__"])', 'a/sub', false],
      ['visibility(["//a:__subpackages__"])', 'a/sub', true],
      ['visibility(["@//a"])', 'a', true],
    ];
    for (const [decl, from, allowed] of rows) {
      expect({ decl, from, errors: loadA(decl, from) }).toEqual({
        decl,
        from,
        errors: allowed
          ? []
          : [`${from}/BUILD:1:6: Starlark file //b:lib.bzl is not visible for loading from package //${from}. Check the file's \`visibility()\` declaration.`],
      });
    }
  });

  it("always lets the .bzl file's own package load it, from its BUILD file and its other .bzl files", () => {
    const { pkg } = loadFixture(
      {
        'b/BUILD': 'load(":lib.bzl", "X")\nload(":other.bzl", "Y")\n',
        'b/lib.bzl': 'visibility("private")\nX = 1\n',
        'b/other.bzl': 'load(":lib.bzl", "X")\nY = X\n',
      },
      'b',
    );
    expect(errorsOf(pkg)).toEqual([]);
  });

  it('checks the package of the .bzl file that loads, not the BUILD file above it', () => {
    const files = {
      'a/BUILD': 'load("//c:m.bzl", "Y")\n',
      'b/BUILD': '',
      'b/lib.bzl': 'visibility(["//c"])\nX = 1\n',
      'c/BUILD': '',
      'c/m.bzl': 'load("//b:lib.bzl", "X")\nY = X\n',
    };
    expect(errorsOf(loadFixture(files, 'a').pkg)).toEqual([]);
    expect(errorsOf(loadFixture({ ...files, 'a/BUILD': 'load("//b:lib.bzl", "X")\n' }, 'a').pkg)).toEqual([
      "a/BUILD:1:6: Starlark file //b:lib.bzl is not visible for loading from package //a. Check the file's `visibility()` declaration.",
    ]);
  });

  it('names other repositories with @repo//', () => {
    const files = {
      WORKSPACE: 'local_repository(name = "repo", path = "repo")\n',
      'b/BUILD': '',
      'b/lib.bzl': 'visibility(["@repo//pkg"])\nX = 1\n',
      'repo/WORKSPACE': '',
      'repo/pkg/BUILD': 'load("@//b:lib.bzl", "X")\n',
      'repo/other/BUILD': 'load("@//b:lib.bzl", "X")\n',
    };
    const { loader } = loadFixture(files, 'b');
    expect(errorsOf(loader.loadPackage('repo', 'pkg'))).toEqual([]);
    expect(errorsOf(loader.loadPackage('repo', 'other'))).toEqual([
      "external/repo/other/BUILD:1:6: Starlark file //b:lib.bzl is not visible for loading from package @repo//other. Check the file's `visibility()` declaration.",
    ]);
  });

  it('applies package specs in the repository of the .bzl file', () => {
    const { pkg } = loadFixture(
      {
        WORKSPACE: 'local_repository(name = "repo", path = "repo")\n',
        'pkg/BUILD': 'load("@repo//lib:bar.bzl", "x")\n',
        'repo/WORKSPACE': '',
        'repo/lib/BUILD': '',
        'repo/lib/bar.bzl': 'visibility(["//pkg"])\nx = 1\n',
      },
      'pkg',
    );
    expect(errorsOf(pkg)).toEqual([
      "pkg/BUILD:1:6: Starlark file @repo//lib:bar.bzl is not visible for loading from package //pkg. Check the file's `visibility()` declaration.",
    ]);
  });

  it('rejects what Bazel rejects: a second call, a call inside a function, bad values, negation, other repositories', () => {
    expect(loadA('visibility("public")\nvisibility("public")')).toEqual(['b/lib.bzl:2:11: load visibility may not be set more than once']);
    expect(loadA('def helper():\n    visibility("public")\nhelper()')).toEqual([
      'b/lib.bzl:2:15: load visibility may only be set at the top level, not inside a function',
    ]);
    expect(loadA('visibility(123)')).toEqual(["b/lib.bzl:1:11: Invalid visibility: got 'int', want string or list of strings"]);
    expect(loadA('visibility(["//a", 123])')).toEqual(['b/lib.bzl:1:11: at index 1 of visibility list, got element of type int, want string']);
    expect(loadA('visibility(["a"])')).toEqual(["b/lib.bzl:1:11: invalid package name 'a': must start with '//', '@', or be 'public' or 'private'"]);
    expect(loadA('visibility(["-//a"])')).toEqual(['b/lib.bzl:1:11: Cannot use negative package patterns here']);
    expect(loadA('visibility(["-public"])')).toEqual(['b/lib.bzl:1:11: Cannot negate "public" package specification']);
    expect(loadA('visibility(["//a:b:c"])')[0]).toMatch(/^b\/lib\.bzl:1:11: invalid package name '\/\/a:b:c': /);
    // BUILD files have no visibility().
    expect(errorsOf(loadFixture({ 'pkg/BUILD': 'visibility("public")\n' }).pkg)).toEqual(['pkg/BUILD:1:1: undefined: visibility']);
  });
});
