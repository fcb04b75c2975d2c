import { cpSync, existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace } from './e2e-workspace.js';
import { startKilnCluster } from './kiln-cluster.js';

/**
 * The workspace Bazel 4.2.3 built (fixtures/tree-artifacts, its outputs and errors recorded in
 * bazel-4.2.3/). Where present-day Bazel differs from 4.2.3 its behaviour is expected instead:
 * `symlink(target_path=)` keeps the path as given (4.2.3 made it absolute), a declared symlink the
 * action made a regular file is an error, `symlink(target_file=)` needs a target of the output's
 * kind and links a directory to a directory (4.2.3 failed with an I/O error), a declared directory
 * the action removed is an error (4.2.3's sandbox left the pre-made one).
 */
const FIXTURE = join(import.meta.dirname, 'fixtures/tree-artifacts');
const BAZEL = join(FIXTURE, 'bazel-4.2.3');
const BIN = 'kiln-bin/pkg';
const GOOD_TARGETS = ['//pkg:good', '//pkg:empty', '//pkg:use', '//pkg:loc', '//pkg:fguse', '//pkg:sympath', '//pkg:symshell', '//pkg:dir2dir'];

function fixtureCopy(): E2eWorkspace {
  const ws = new E2eWorkspace({});
  cpSync(FIXTURE, ws.root, { recursive: true, filter: (src) => !src.startsWith(BAZEL) });
  return ws;
}

/** Every entry under kiln-bin/pkg: files by content, symlinks by target, directories by name. */
function outputsOf(ws: E2eWorkspace): Record<string, string> {
  const root = join(ws.root, BIN);
  const seen: Record<string, string> = {};
  const walk = (dir: string, prefix: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const name = `${prefix}${entry.name}`;
      if (entry.isSymbolicLink()) seen[name] = `-> ${readlinkSync(path)}`;
      else if (entry.isDirectory()) {
        seen[name] = 'dir';
        walk(path, `${name}/`);
      } else seen[name] = readFileSync(path, 'utf8');
    }
  };
  walk(root, '');
  return seen;
}

const bazelError = (fragment: string) =>
  readFileSync(join(BAZEL, 'errors.recorded.txt'), 'utf8')
    .split('\n')
    .find((l) => l.includes(fragment))!;

describe.each(['local', 'sandboxed'])('tree artifacts and symlinks end to end (--spawn_strategy=%s)', (strategy) => {
  it('builds what Bazel 4.2.3 built, with its outputs, and fails what it failed in its words', { timeout: 60_000 }, async () => {
    const ws = fixtureCopy();
    const run = await ws.kiln(['build', `--spawn_strategy=${strategy}`, '--keep_going', '//pkg:all']);
    expect(run.code).toBe(1);
    for (const name of ['loc.txt', 'fguse.txt', 'use.txt']) expect(ws.read(`${BIN}/${name}`), name).toBe(readFileSync(join(BAZEL, name), 'utf8'));
    const outputs = outputsOf(ws);
    expect(outputs).toMatchObject({
      good_dir: 'dir',
      'good_dir/a.txt': 'a\n',
      'good_dir/link': '-> a.txt',
      'good_dir/sub/b.txt': 'b\n',
      empty_dir: 'dir',
      sympath_link: '-> some/where',
      symshell_link: '-> ../x/y',
      'dir2dir_d/sub/b.txt': 'b\n',
      'dir2dir_d/link': '-> a.txt',
      // Kept as the action made it; its dependents see the file it points to (as Bazel's do).
      'abslink_dir/abs': '-> /etc/passwd',
    });
    const errors = run.stderr.split('\n').filter((l) => l.startsWith('ERROR: ') || l.startsWith('Error: '));
    // Analysis: Bazel's message, at the implementation's call (Bazel 4.2.3 recorded for target_path).
    expect(bazelError('Error in symlink:')).toBe(`Error in symlink: ${errors.find((l) => l.includes('//pkg:badpath'))!.replace(/^.*\/\/pkg:badpath: /, '')}`);
    expect(errors).toContain(
      'ERROR: pkg/defs.bzl:35:24: in dirlink rule //pkg:dirlink: symlink() with "target_file" directory param requires that "output" be declared as a directory (did you mean to use declare_directory() instead of declare_file()?)',
    );
    expect(errors).toContain(
      'ERROR: pkg/defs.bzl:41:24: in dir2dir rule //pkg:dir2file: symlink() with "target_file" file param requires that "output" be declared as a file (did you mean to use declare_file() instead of declare_directory()?)',
    );
    // Execution: Bazel's words for the tree (its absolute execroot path is the exec path here).
    expect(errors).toContain(
      `ERROR: pkg/BUILD:4:1: Action pkg/asfile_dir failed: ${bazelError('TreeArtifact pkg/asfile_dir').replace(/^ERROR: pkg\/BUILD:4:5: /, '')}`,
    );
    expect(errors).toContain(
      `ERROR: pkg/BUILD:6:1: Action pkg/escape_dir failed: ${bazelError('traverse outside')
        .replace(/^.*: (A TreeArtifact may not)/, '$1')
        .replace('<execroot>/', '')}`,
    );
    expect(errors).toContain(
      "ERROR: pkg/BUILD:13:1: Action pkg/symfile_link failed: declared output 'bazel-out/k8-fastbuild/bin/pkg/symfile_link' is not a symlink",
    );
    expect(errors).toContain(
      "ERROR: pkg/BUILD:5:1: Action pkg/removed_dir failed: declared output 'bazel-out/k8-fastbuild/bin/pkg/removed_dir' was not created",
    );
    // Nothing is left of the failed outputs.
    for (const failed of ['asfile_dir', 'escape_dir', 'symfile_link', 'removed_dir']) expect(existsSync(join(ws.root, BIN, failed)), failed).toBe(false);

    const again = await ws.kiln(['build', `--spawn_strategy=${strategy}`, '//pkg:abslink', ...GOOD_TARGETS]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('INFO: 0 processes.');
  });
});

describe('tree artifacts against kiln cluster up (REAPI)', () => {
  // An absolute symlink inside a tree (//pkg:abslink) is left out: the executor never follows a link
  // out of the action's directory, so it reports it as a symlink, which the client refuses.
  it('builds trees and symlinks remotely byte-identical to local, serves them from the remote cache, keeps them remote without the bytes', {
    timeout: 120_000,
  }, async () => {
    const cluster = await startKilnCluster();
    const remote = fixtureCopy();
    const built = await remote.kiln(['build', `--remote_executor=${cluster.endpoint}`, ...GOOD_TARGETS]);
    expect(built.code, built.stderr).toBe(0);
    expect(built.stderr).toContain('INFO: 8 processes: 2 internal, 6 remote.');
    const local = fixtureCopy();
    expect((await local.kiln(['build', '--spawn_strategy=local', ...GOOD_TARGETS])).code).toBe(0);
    expect(outputsOf(remote)).toEqual(outputsOf(local));

    // Another checkout: the trees come from the cluster's cache (ActionResult.output_directories + Tree).
    const second = fixtureCopy();
    const cached = await second.kiln(['build', `--remote_executor=${cluster.endpoint}`, ...GOOD_TARGETS]);
    expect(cached.code, cached.stderr).toBe(0);
    expect(cached.stderr).toContain('INFO: 8 processes: 6 remote cache hit, 2 internal.');
    expect(outputsOf(second)).toEqual(outputsOf(local));

    // Without the bytes the tree stays on the server; a local action that reads it fetches it whole.
    const minimal = fixtureCopy();
    const kept = await minimal.kiln(['build', `--remote_executor=${cluster.endpoint}`, '--remote_download_minimal', '//pkg:use']);
    expect(kept.code, kept.stderr).toBe(0);
    expect(lstatSync(join(minimal.root, 'kiln-out'), { throwIfNoEntry: false })?.isSymbolicLink()).toBe(true);
    expect(existsSync(join(minimal.root, BIN, 'good_dir'))).toBe(false);
    const fetched = await minimal.kiln([
      'build',
      `--remote_executor=${cluster.endpoint}`,
      '--remote_download_minimal',
      '--noremote_accept_cached',
      '--strategy=Genrule=local',
      '//pkg:loc',
    ]);
    expect(fetched.code, fetched.stderr).toBe(0);
    expect(minimal.read(`${BIN}/loc.txt`)).toBe(readFileSync(join(BAZEL, 'loc.txt'), 'utf8'));
    expect(minimal.read(`${BIN}/good_dir/sub/b.txt`)).toBe('b\n');
  });
});

describe('a tree artifact in runfiles', () => {
  it('a test sees the directory, whole, in its runfiles tree', { timeout: 60_000 }, async () => {
    const ws = new E2eWorkspace({
      'MODULE.bazel': 'module(name = "trees")\n',
      'defs.bzl': [
        'def _impl(ctx):',
        '    d = ctx.actions.declare_directory("data")',
        '    ctx.actions.run_shell(outputs = [d], command = "mkdir -p %s/sub && echo deep > %s/sub/f.txt && ln -s sub/f.txt %s/link" % (d.path, d.path, d.path))',
        '    exe = ctx.actions.declare_file("check.sh")',
        '    ctx.actions.write(exe, "test \\"$(cd data && find . | sort | tr \'\\\\n\' \' \')\\" = \'. ./link ./sub ./sub/f.txt \' && test \\"$(cat data/link)\\" = deep\\n", is_executable = True)',
        '    return [DefaultInfo(executable = exe, runfiles = ctx.runfiles(files = [d]))]',
        'check_test = rule(_impl, test = True)',
        '',
      ].join('\n'),
      BUILD: 'load(":defs.bzl", "check_test")\ncheck_test(name = "check")\n',
    });
    const run = await ws.kiln(['test', '--test_output=errors', '//:check']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout + run.stderr).toContain('//:check');
  });
});
