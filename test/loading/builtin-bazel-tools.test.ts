import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BAZEL_TOOLS_FILES } from '../../src/loading/builtin-bazel-tools.js';
import { errorsOf, loadFixture, newLoader, rule } from './load-helper.js';
import { workspaceFixture } from './fixture.js';

const PACKAGES = Object.keys(BAZEL_TOOLS_FILES)
  .filter((p) => p === 'BUILD' || p.endsWith('/BUILD'))
  .map((p) => (p === 'BUILD' ? '' : p.slice(0, -'/BUILD'.length)));
const BZL_FILES = Object.keys(BAZEL_TOOLS_FILES).filter((p) => p.endsWith('.bzl'));

describe('@bazel_tools', () => {
  it('every package loads without errors, and so does every .bzl file', () => {
    const bzlLoads = BZL_FILES.map((p, i) => {
      const slash = p.lastIndexOf('/');
      return `load("@bazel_tools//${p.slice(0, slash)}:${p.slice(slash + 1)}", m${i} = "${p.endsWith('http.bzl') ? 'http_archive' : p.endsWith('git.bzl') ? 'git_repository' : p.endsWith('repo/utils.bzl') ? 'maybe' : p.endsWith('action_names.bzl') ? 'ACTION_NAMES' : 'use_cpp_toolchain'}")`;
    });
    const { pkg, loader } = loadFixture({ 'pkg/BUILD': `${bzlLoads.join('\n')}\n\nfilegroup(name = "f")\n` });
    expect(errorsOf(pkg)).toEqual([]);
    expect(PACKAGES).toEqual(expect.arrayContaining(['tools/bash/runfiles', 'src/conditions', 'tools/sh', 'tools/cpp', 'tools/test', 'tools/build_defs/repo']));
    for (const p of PACKAGES) expect({ p, errors: errorsOf(loader.loadPackage('bazel_tools', p)) }).toEqual({ p, errors: [] });
  });

  it('has the labels rule sets name', () => {
    const { loader } = loadFixture({ 'pkg/BUILD': '' });
    const target = (pkg: string, name: string) => loader.loadPackage('bazel_tools', pkg).targets.get(name);
    expect(rule(loader.loadPackage('bazel_tools', 'tools/bash/runfiles'), 'runfiles')).toMatchObject({ ruleClass: 'sh_library' });
    expect(rule(loader.loadPackage('bazel_tools', 'tools/bash/runfiles'), 'runfiles').attrs.get('srcs')).toEqual([
      '@bazel_tools//tools/bash/runfiles:runfiles.bash',
    ]);
    expect(target('tools/sh', 'toolchain_type')).toMatchObject({ kind: 'rule', ruleClass: 'toolchain_type' });
    expect(target('tools/cpp', 'toolchain_type')).toMatchObject({ kind: 'rule', ruleClass: 'toolchain_type' });
    for (const name of ['current_cc_toolchain', 'cc_flags', 'malloc', 'link_extra_lib']) expect(target('tools/cpp', name)?.kind).toBe('rule');
    for (const name of ['test_setup', 'runtime', 'test_xml_generator', 'collect_coverage', 'lcov_merger'])
      expect(target('tools/test', name)?.kind).toBe('rule');
    const conditions = loader.loadPackage('bazel_tools', 'src/conditions');
    expect(rule(conditions, 'linux_x86_64').attrs.get('constraint_values')).toEqual(['@platforms//os:linux', '@platforms//cpu:x86_64']);
    expect(rule(conditions, 'linux_aarch64').attrs.get('constraint_values')).toEqual(['@platforms//os:linux', '@platforms//cpu:aarch64']);
    expect(rule(conditions, 'host_windows').attrs.get('constraint_values')).toEqual(['@platforms//os:windows']);
    for (const name of ['darwin', 'windows', 'freebsd', 'openbsd', 'darwin_arm64', 'linux_ppc64le', 'linux_s390x'])
      expect(rule(conditions, name).ruleClass).toBe('config_setting');
  });

  it('repository loaders load, and calling one that needs a download fails naming what it would have fetched', () => {
    const defs = [
      'load("@bazel_tools//tools/build_defs/repo:http.bzl", "http_archive", "http_file", "http_jar")',
      'load("@bazel_tools//tools/build_defs/repo:git.bzl", "git_repository", "new_git_repository")',
      'load("@bazel_tools//tools/build_defs/repo:utils.bzl", "maybe")',
      'def archive():',
      '    http_archive(name = "zlib", urls = ["https://example.com/zlib-1.3.tar.gz", "https://mirror.example.com/zlib-1.3.tar.gz"], sha256 = "00")',
      'def file():',
      '    maybe(http_file, name = "f", url = "https://example.com/f.txt")',
      'def already():',
      '    maybe(http_file, name = "g", url = "https://example.com/g.txt")',
      'def git():',
      '    git_repository(name = "r", remote = "https://example.com/r.git", commit = "abc123")',
      '',
    ].join('\n');
    const errors = (call: string) =>
      errorsOf(
        loadFixture({ 'pkg/defs.bzl': defs, 'pkg/BUILD': `load(":defs.bzl", "archive", "file", "already", "git")\nfilegroup(name = "g")\n${call}\n` }).pkg,
      );
    expect(errors('')).toEqual([]);
    const [archive] = errors('archive()');
    expect(archive).toMatch(/^external\/bazel_tools\/tools\/build_defs\/repo\/http\.bzl:\d+:\d+: /);
    expect(archive).toContain(
      'http_archive(name = "zlib") would fetch https://example.com/zlib-1.3.tar.gz, https://mirror.example.com/zlib-1.3.tar.gz: Kiln does not download external repositories',
    );
    expect(errors('file()')[0]).toContain('http_file(name = "f") would fetch https://example.com/f.txt');
    // maybe() skips a name the package already has.
    expect(errors('already()')).toEqual([]);
    expect(errors('git()')[0]).toContain('git_repository(name = "r") would fetch https://example.com/r.git (abc123)');
  });

  it("a workspace's own bazel_tools repository wins", () => {
    const root = workspaceFixture({
      WORKSPACE: 'local_repository(name = "bazel_tools", path = "my_tools")\n',
      'my_tools/WORKSPACE': '',
      'my_tools/tools/sh/BUILD': 'filegroup(name = "mine", visibility = ["//visibility:public"])\n',
      'pkg/BUILD': 'filegroup(name = "f", srcs = ["@bazel_tools//tools/sh:mine"])\n',
    });
    const loader = newLoader(root);
    expect(errorsOf(loader.loadPackage('', 'pkg'))).toEqual([]);
    const sh = loader.loadPackage('bazel_tools', 'tools/sh');
    expect(sh.targets.has('toolchain_type')).toBe(false);
    expect(sh.targets.has('mine')).toBe(true);
  });
});

describe('@bazel_tools//tools/bash/runfiles: rlocation', () => {
  /** A runfiles tree beside a test script that sources the library as Bazel's init block does. */
  function runfilesFixture(): { root: string; script: string; runfiles: string } {
    const root = workspaceFixture({});
    const runfiles = join(root, 'bin/pkg/t.runfiles');
    const files: Record<string, string> = {
      '_main/pkg/data.txt': 'data\n',
      '_main/pkg/dir/inner.txt': 'inner\n',
      'other_repo/lib/x.txt': 'x\n',
      'bazel_tools/tools/bash/runfiles/runfiles.bash': BAZEL_TOOLS_FILES['tools/bash/runfiles/runfiles.bash']!,
    };
    for (const [p, c] of Object.entries(files)) {
      mkdirSync(join(runfiles, p, '..'), { recursive: true });
      writeFileSync(join(runfiles, p), c);
    }
    writeFileSync(
      join(runfiles, 'MANIFEST'),
      `${Object.keys(files)
        .map((p) => `${p} ${join(runfiles, p)}`)
        .join('\n')}\n`,
    );
    const script = join(root, 'bin/pkg/t');
    writeFileSync(
      script,
      [
        '#!/usr/bin/env bash',
        '# --- begin runfiles.bash initialization v3 ---',
        'set -uo pipefail; set +e; f=bazel_tools/tools/bash/runfiles/runfiles.bash',
        'source "${RUNFILES_DIR:-/dev/null}/$f" 2>/dev/null || \\',
        '  source "$(grep -sm1 "^$f " "${RUNFILES_MANIFEST_FILE:-/dev/null}" | cut -f2- -d\' \')" 2>/dev/null || \\',
        '  source "$0.runfiles/$f" 2>/dev/null || \\',
        '  source "$(grep -sm1 "^$f " "$0.runfiles_manifest" | cut -f2- -d\' \')" 2>/dev/null || \\',
        '  { echo>&2 "ERROR: cannot find $f"; exit 1; }; f=; set -e',
        '# --- end runfiles.bash initialization v3 ---',
        'for p in "$@"; do',
        '  if loc="$(rlocation "$p")"; then echo "$p -> ${loc#$ROOT/} : $(cat "$loc" 2>/dev/null || echo "(dir)")"; else echo "$p -> missing ($?)"; fi',
        'done',
        '',
      ].join('\n'),
    );
    chmodSync(script, 0o755);
    return { root, script, runfiles };
  }

  const run = (script: string, env: Record<string, string>, args: string[], root: string) =>
    execFileSync('bash', [script, ...args], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ROOT: root, ...env }, encoding: 'utf8' });

  const ARGS = ['_main/pkg/data.txt', 'other_repo/lib/x.txt', '_main/pkg/nope.txt'];

  it('finds runfiles under RUNFILES_DIR', () => {
    const { root, script, runfiles } = runfilesFixture();
    expect(run(script, { RUNFILES_DIR: runfiles }, ARGS, root)).toBe(
      [
        '_main/pkg/data.txt -> bin/pkg/t.runfiles/_main/pkg/data.txt : data',
        'other_repo/lib/x.txt -> bin/pkg/t.runfiles/other_repo/lib/x.txt : x',
        '_main/pkg/nope.txt -> missing (1)',
        '',
      ].join('\n'),
    );
  });

  it('finds runfiles through RUNFILES_MANIFEST_FILE alone, directory entries answering for the files below them', () => {
    const { root, script, runfiles } = runfilesFixture();
    const manifest = join(root, 'other.manifest');
    writeFileSync(
      manifest,
      `bazel_tools/tools/bash/runfiles/runfiles.bash ${runfiles}/bazel_tools/tools/bash/runfiles/runfiles.bash\n_main/pkg/data.txt ${runfiles}/_main/pkg/data.txt\n_main/pkg/dir ${runfiles}/_main/pkg/dir\n`,
    );
    expect(run(script, { RUNFILES_MANIFEST_FILE: manifest }, ['_main/pkg/data.txt', '_main/pkg/dir/inner.txt', 'other_repo/lib/x.txt'], root)).toBe(
      [
        '_main/pkg/data.txt -> bin/pkg/t.runfiles/_main/pkg/data.txt : data',
        '_main/pkg/dir/inner.txt -> bin/pkg/t.runfiles/_main/pkg/dir/inner.txt : inner',
        'other_repo/lib/x.txt -> missing (1)',
        '',
      ].join('\n'),
    );
  });

  it('finds the runfiles beside $0 when neither variable is set; absolute paths pass, unnormalised ones fail', () => {
    const { root, script } = runfilesFixture();
    expect(run(script, {}, ['_main/pkg/data.txt', '/etc/hostname'], root)).toBe(
      [
        '_main/pkg/data.txt -> bin/pkg/t.runfiles/_main/pkg/data.txt : data',
        `/etc/hostname -> /etc/hostname : ${spawnSync('cat', ['/etc/hostname'], { encoding: 'utf8' }).stdout.trim() || '(dir)'}`,
        '',
      ].join('\n'),
    );
    const bad = spawnSync('bash', [script, '../escape', '_main/./pkg/data.txt'], { env: { PATH: process.env.PATH ?? '', ROOT: root }, encoding: 'utf8' });
    expect(bad.stdout).toBe('../escape -> missing (1)\n_main/./pkg/data.txt -> missing (1)\n');
    expect(bad.stderr).toContain('ERROR[runfiles.bash]: rlocation(../escape): path is not normalized');
  });
});
