import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Label } from '../../src/loading/label.js';
import { findWorkspaceRoot, readRegistrations, readWorkspaceName, Workspace } from '../../src/loading/workspace.js';
import { workspaceFixture } from './fixture.js';

describe('workspace discovery', () => {
  it('finds the nearest folder upward with a workspace marker', () => {
    const root = workspaceFixture({ WORKSPACE: '', 'a/b/BUILD': '', 'a/inner/MODULE.bazel': '', 'a/inner/x/y.txt': '' });
    expect(findWorkspaceRoot(join(root, 'a/b'))).toBe(root);
    expect(findWorkspaceRoot(join(root, 'a/inner/x'))).toBe(join(root, 'a/inner'));
  });

  it('reads the repository name from module() or workspace()', () => {
    expect(readWorkspaceName(workspaceFixture({ 'MODULE.bazel': 'module(\n  name = "my_mod",\n  version = "1.0",\n)\n' }))).toBe('my_mod');
    expect(readWorkspaceName(workspaceFixture({ WORKSPACE: '# hi\nworkspace(name = "ws")\n' }))).toBe('ws');
    expect(readWorkspaceName(workspaceFixture({ 'WORKSPACE.bazel': '' }))).toBe('');
  });

  it('fails clearly outside a workspace', () => {
    const dir = workspaceFixture({ 'x/y': '' });
    // A temp dir normally has no workspace above it; the check only runs when that holds.
    if (findWorkspaceRoot(dir) === undefined) expect(() => Workspace.discover(dir)).toThrow(/only supported from within a workspace/);
  });
});

describe('package lookup', () => {
  const files = {
    WORKSPACE: '',
    BUILD: '',
    'a/BUILD.bazel': '',
    'a/BUILD': '',
    'a/b/BUILD': '',
    'a/b/c/file.txt': '',
    'a/notpkg/BUILD/x': '', // a directory named BUILD is not a BUILD file
    'd/e/f/BUILD': '',
    'bazel-out/x/BUILD': '',
    'kiln-bin/BUILD': '',
    'ignored/BUILD': '',
    '.bazelignore': 'ignored\n',
  };

  it('prefers BUILD.bazel and recognises packages', () => {
    const ws = new Workspace(workspaceFixture(files), '');
    expect(ws.buildFileOf('a')).toBe('BUILD.bazel');
    expect(ws.buildFileOf('a/b')).toBe('BUILD');
    expect(ws.isPackage('a/notpkg')).toBe(false);
    expect(ws.isPackage('d/e')).toBe(false);
    expect(ws.containingPackage('a/b/c/file.txt')).toBe('a/b');
    expect(ws.containingPackage('d/e/x.txt')).toBe('');
  });

  it('walks //... skipping convenience and ignored directories', () => {
    const ws = new Workspace(workspaceFixture(files), '');
    expect(ws.packagesUnder('')).toEqual(['', 'a', 'a/b', 'd/e/f']);
    expect(ws.packagesUnder('a')).toEqual(['a', 'a/b']);
    expect(ws.packagesUnder('d')).toEqual(['d/e/f']);
  });

  it('does not walk into a symlink to an ancestor', () => {
    const ws = new Workspace(workspaceFixture({ WORKSPACE: '', 'a/BUILD': '', 'a/up': '@link:..', 'a/b/BUILD': '' }), '');
    expect(ws.packagesUnder('')).toEqual(['a', 'a/b']);
  });

  it("reports a label that crosses into a subpackage in Bazel's words", () => {
    const ws = new Workspace(workspaceFixture(files), '');
    expect(ws.subpackageCrossing(Label.parse('//a:b/c'))).toBe(
      "Label '//a:b/c' is invalid because 'a/b' is a subpackage; perhaps you meant to put the colon here: '//a/b:c'?",
    );
    expect(ws.subpackageCrossing(Label.parse('//:a/x'))).toBe(
      "Label '//:a/x' is invalid because 'a' is a subpackage; perhaps you meant to put the colon here: '//a:x'?",
    );
    expect(ws.subpackageCrossing(Label.parse('//a/b:c/file.txt'))).toBeNull();
  });
});

describe('toolchain and execution platform registrations', () => {
  it("reads MODULE.bazel's, then WORKSPACE's, in order; keyword arguments and comments are skipped", () => {
    const root = workspaceFixture({
      'MODULE.bazel': 'module(name = "m")\nregister_toolchains("//tc:all", "@r//x/...", dev_dependency = True)\nregister_execution_platforms("//p:a")\n',
      WORKSPACE: [
        '# register_toolchains("//commented:out")',
        'register_toolchains(',
        '    "//ws:one",  # trailing comment',
        "    '//ws:two',",
        ')',
        'register_execution_platforms("//p:b", "//p:c")',
        '',
      ].join('\n'),
    });
    expect(readRegistrations(root)).toEqual({
      toolchains: ['//tc:all', '@r//x/...', '//ws:one', '//ws:two'],
      executionPlatforms: ['//p:a', '//p:b', '//p:c'],
      sources: [],
    });
    expect(
      readRegistrations(workspaceFixture({ 'WORKSPACE.bazel': 'register_toolchains("//a:b")\n', WORKSPACE: 'register_toolchains("//ignored:x")\n' })),
    ).toEqual({
      toolchains: ['//a:b'],
      executionPlatforms: [],
      sources: [],
    });
  });
});

describe('registrations made by the macros WORKSPACE calls', () => {
  it('follows loaded macros through native.register_* calls, nested helpers and other files, in call order', () => {
    const root = workspaceFixture({
      WORKSPACE: [
        'workspace(name = "me")',
        'load("//:deps.bzl", "setup")',
        'load("@me//tc:more.bzl", more = "register_more")',
        'register_toolchains("//first:tc")',
        'setup()',
        'more()',
        'register_execution_platforms("//p:last")',
        '',
      ].join('\n'),
      'deps.bzl': [
        'load("//tc:more.bzl", "register_more")',
        'def _helper():',
        '    native.register_toolchains("//helper:tc")',
        'def setup():',
        '    if True:',
        '        _helper()',
        '    native.register_execution_platforms("//p:setup")',
        '    register_toolchains("//not/native:ignored")',
        '',
      ].join('\n'),
      'tc/BUILD': '',
      'tc/more.bzl': 'def register_more():\n    native.register_toolchains(":relative_as_written", "//more:tc")\n    register_more()\n',
    });
    const found = readRegistrations(root);
    expect(found.toolchains).toEqual(['//first:tc', '//helper:tc', ':relative_as_written', '//more:tc']);
    expect(found.executionPlatforms).toEqual(['//p:setup', '//p:last']);
    expect(found.sources).toEqual([join(root, 'deps.bzl'), join(root, 'tc/more.bzl')]);
  });

  it('reads a WORKSPACE that does not parse by its literal calls', () => {
    const root = workspaceFixture({ WORKSPACE: 'register_toolchains("//a:b")\nthis is not starlark(\n' });
    expect(readRegistrations(root)).toEqual({ toolchains: ['//a:b'], executionPlatforms: [], sources: [] });
  });
});
