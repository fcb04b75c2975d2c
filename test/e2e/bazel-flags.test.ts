import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace } from './e2e-workspace.js';
import { needTool } from '../setup/need-tool.js';

const SH_TESTS = {
  WORKSPACE: '',
  'p/BUILD': [
    'sh_test(name = "pass", srcs = ["pass.sh"], tags = ["fast"])',
    'sh_test(name = "fail", srcs = ["fail.sh"])',
    'sh_test(name = "xmlfail", srcs = ["xmlfail.sh"], tags = ["slow"])',
    'genrule(name = "gen", outs = ["gen.txt"], cmd = "echo gen > $@", tags = ["slow"])',
    'genrule(name = "plain", outs = ["plain.txt"], cmd = "echo plain > $@")',
    '',
  ].join('\n'),
  'p/pass.sh': '#!/bin/sh\nexit 0\n',
  'p/fail.sh': '#!/bin/sh\necho boom\nexit 1\n',
  // A test that writes its own JUnit XML: one passing case, one failure, one error.
  'p/xmlfail.sh': [
    '#!/bin/sh',
    'cat > "$XML_OUTPUT_FILE" <<X',
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<testsuites><testsuite name="s" tests="3">',
    '<testcase name="a" classname="my.Cls" time="0.25"/>',
    '<testcase name="b" classname="my.Cls" time="1.5"><failure message="bad">x</failure></testcase>',
    '<testcase name="c" classname="" time="0.1"><error message="e"/></testcase>',
    '</testsuite></testsuites>',
    'X',
    'exit 1',
    '',
  ].join('\n'),
};

function executable(ws: E2eWorkspace, ...paths: string[]): void {
  for (const p of paths) spawnSync('chmod', ['+x', join(ws.root, p)]);
}

describe('--test_summary', () => {
  // Compared with Bazel 4.2.3 on the same workspace (recorded 2026-12-03); present-day Bazel's
  // TerminalTestResultNotifier decides where they differ: `detailed` lists every test (4.2.3 only
  // those that did not pass) with its passed test cases, and the test-case line counts skipped cases.
  it('short, terse, detailed, testcase and none print what Bazel prints', async () => {
    const ws = new E2eWorkspace(SH_TESTS);
    executable(ws, 'p/pass.sh', 'p/fail.sh', 'p/xmlfail.sh');
    const short = await ws.kiln(['test', '//p:all']);
    expect(short.code).toBe(3);
    expect(short.stdout).toMatch(/^\/\/p:pass +PASSED in \d+\.\ds$/m);
    expect(short.stdout).toMatch(/^\/\/p:fail +FAILED in \d+\.\ds\n {2}\/.*p\/fail\/test\.log$/m);

    const terse = await ws.kiln(['test', '//p:all', '--test_summary=terse']);
    expect(terse.stdout).not.toContain('//p:pass ');
    expect(terse.stdout).toMatch(/^\/\/p:fail +FAILED/m);
    // Failed tests are never cached: they run again, as in Bazel.
    expect(terse.stdout).toContain('Executed 2 out of 3 tests: 1 test passes and 2 fail locally.');

    const detailed = await ws.kiln(['test', '//p:all', '--test_summary=detailed']);
    const lines = detailed.stdout.split('\n');
    expect(lines).toContain('    ERROR   .p/fail (0.0s)');
    expect(lines).toContain('    PASSED  my.Cls.a (0.3s)');
    expect(lines).toContain('    FAILED  my.Cls.b (1.5s)');
    expect(lines).toContain('    ERROR   .c (0.1s)');
    expect(detailed.stdout).not.toContain('test.log');
    expect(lines).toContain('Test cases: finished with 2 passing, 0 skipped and 3 failing out of 5 test cases');

    const testcase = await ws.kiln(['test', '//p:all', '--test_summary=testcase']);
    expect(testcase.stdout).not.toMatch(/^\/\/p:/m);
    expect(testcase.stdout).toContain('Test cases: finished with 2 passing, 0 skipped and 3 failing out of 5 test cases');

    const none = await ws.kiln(['test', '//p:all', '--test_summary=none']);
    expect(none.stdout.split('\n')[1]).toBe('Executed 2 out of 3 tests: 1 test passes and 2 fail locally.');

    const bad = await ws.kiln(['test', '//p:all', '--test_summary=long']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--test_summary=long');
  });
});

describe('--target_pattern_file and --build_tag_filters', () => {
  it('reads patterns from a file, with comments, and refuses patterns in both places', async () => {
    const ws = new E2eWorkspace({ ...SH_TESTS, 'targets.txt': '# what CI builds\n//p:gen\n\n  //p:plain   # and this\n' });
    const run = await ws.kiln(['build', '--target_pattern_file=targets.txt']);
    expect(run.code, run.stderr).toBe(0);
    expect(ws.read('kiln-bin/p/gen.txt')).toBe('gen\n');
    expect(ws.read('kiln-bin/p/plain.txt')).toBe('plain\n');
    const both = await ws.kiln(['build', '--target_pattern_file=targets.txt', '//p:gen']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('ERROR: Command-line target pattern and --target_pattern_file cannot both be specified');
    const missing = await ws.kiln(['build', '--target_pattern_file=nope.txt']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`I/O error reading from ${join(ws.root, 'nope.txt')}`);
  });

  it('builds only the targets whose tags pass, and still runs the tests kiln test selects', async () => {
    const ws = new E2eWorkspace(SH_TESTS);
    executable(ws, 'p/pass.sh', 'p/fail.sh', 'p/xmlfail.sh');
    const build = await ws.kiln(['build', '--build_tag_filters=-slow', '//p:all']);
    expect(build.code, build.stderr).toBe(0);
    expect(existsSync(join(ws.root, 'kiln-bin/p/plain.txt'))).toBe(true);
    expect(existsSync(join(ws.root, 'kiln-bin/p/gen.txt'))).toBe(false);
    const positive = await ws.kiln(['build', '--build_tag_filters=fast', '//p:all']);
    expect(positive.stderr).toMatch(/Analyzed 1 target/);
    // As Bazel: the build tag filters do not change which tests run; the test filters do.
    const test = await ws.kiln(['test', '--build_tag_filters=fast', '--test_tag_filters=-slow', '//p:all']);
    expect(test.stdout).toMatch(/^\/\/p:pass +PASSED/m);
    expect(test.stdout).toMatch(/^\/\/p:fail +FAILED/m);
    expect(test.stdout).not.toContain('//p:xmlfail');
  });
});

describe('--run_under and --local_test_jobs', () => {
  const RUN_UNDER = {
    WORKSPACE: '',
    'p/BUILD': [
      'sh_test(name = "under", srcs = ["under.sh"])',
      'sh_binary(name = "tool", srcs = ["tool.sh"])',
      '[sh_test(name = "one_at_a_time_%d" % i, srcs = ["exclusive.sh"]) for i in range(3)]',
      '',
    ].join('\n'),
    'p/under.sh': '#!/bin/sh\n[ "$UNDER" = yes ] || { echo "not under the wrapper"; exit 1; }\n',
    'p/tool.sh': '#!/bin/sh\necho "tool UNDER=$UNDER args=$*"\n',
    // Fails when another run is inside at the same time (the shared directory comes through --test_env).
    'p/exclusive.sh': '#!/bin/sh\nmkdir "$SHARED/inside" || exit 1\nsleep 0.3\nrmdir "$SHARED/inside"\n',
  };

  it('runs tests and kiln run programs under the command, as Bazel does', async () => {
    const ws = new E2eWorkspace(RUN_UNDER);
    executable(ws, 'p/under.sh', 'p/tool.sh', 'p/exclusive.sh');
    expect((await ws.kiln(['test', '//p:under'])).code).toBe(3);
    const under = await ws.kiln(['test', '--run_under=/usr/bin/env UNDER=yes', '//p:under']);
    expect(under.code, under.stdout + under.stderr).toBe(0);
    const run = await ws.kiln(['run', '--run_under=/usr/bin/env UNDER=yes', '//p:tool', '--', 'a b']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('tool UNDER=yes args=a b\n');
    expect(run.stderr).toContain("INFO: Running command line: /bin/bash -c '/usr/bin/env UNDER=yes kiln-bin/p/tool '\\''a b'\\'''");
    const label = await ws.kiln(['test', '--run_under=//p:tool', '//p:under']);
    expect(label.code).toBe(2);
    expect(label.stderr).toContain('--run_under=//p:tool: a target as --run_under is not supported by Kiln yet');
  });

  it('--local_test_jobs=1 runs one test at a time', async () => {
    const ws = new E2eWorkspace(RUN_UNDER);
    executable(ws, 'p/exclusive.sh');
    const shared = mkdtempSync(join(tmpdir(), 'kiln-shared-'));
    const run = await ws.kiln([
      'test',
      '--spawn_strategy=local',
      '--jobs=4',
      '--local_test_jobs=1',
      `--test_env=SHARED=${shared}`,
      '//p:all',
      '--',
      '-//p:under',
    ]);
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).toContain('Executed 3 out of 3 tests: 3 tests pass.');
  });
});

describe('convenience symlinks', () => {
  it('links <prefix><workspace directory> to the execroot, and genfiles only with --noincompatible_skip_genfiles_symlink', async () => {
    const ws = new E2eWorkspace({ WORKSPACE: '', 'p/BUILD': 'genrule(name = "g", outs = ["g.txt"], cmd = "echo > $@")\n' });
    expect((await ws.kiln(['build', '//p:g'])).code).toBe(0);
    const execRootLink = join(ws.root, `kiln-${basename(ws.root)}`);
    expect(readlinkSync(execRootLink)).toMatch(/\/execroot\/__main__$/);
    expect(existsSync(join(ws.root, 'kiln-genfiles'))).toBe(false);
    // The link into the execroot is no package and no glob sees it.
    const query = await ws.kiln(['query', '//...']);
    expect(query.stdout.trim()).toBe('//p:g');
    expect((await ws.kiln(['build', '--noincompatible_skip_genfiles_symlink', '//p:g'])).code).toBe(0);
    expect(lstatSync(join(ws.root, 'kiln-genfiles')).isSymbolicLink()).toBe(true);
    expect((await ws.kiln(['build', '//p:g'])).code).toBe(0);
    expect(existsSync(join(ws.root, 'kiln-genfiles'))).toBe(false);
  });
});

const HAS_BWRAP = spawnSync(process.env['KILN_BWRAP'] ?? 'bwrap', ['--version']).status === 0;

describe('--sandbox_writable_path and --sandbox_tmpfs_path', () => {
  const sandboxHere = needTool('bubblewrap', HAS_BWRAP, 'run scripts/test-setup.d/10-bubblewrap.sh (npm test does)');
  it.skipIf(!sandboxHere)('a sandboxed action writes to the writable path and sees an empty tmpfs', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'kiln-writable-'));
    const ws = new E2eWorkspace({
      WORKSPACE: '',
      // The input's directory is mounted read-only in the sandbox; a tmpfs there hides it.
      'p/hidden/f': 'host file\n',
      'p/BUILD': [
        'genrule(name = "g", srcs = ["hidden/f"], outs = ["g.txt"], cmd = " ; ".join([',
        `    "(touch ${outside}/made 2>/dev/null && echo wrote || echo refused) > $@",`,
        '    "ls -A $$(dirname $$(readlink -f $<)) >> $@",',
        '    "(touch $$(dirname $$(readlink -f $<))/x 2>/dev/null && echo tmpfs-writable || echo read-only) >> $@",',
        ']))',
        '',
      ].join('\n'),
    });
    const confined = await ws.kiln(['build', '--spawn_strategy=sandboxed', '//p:g']);
    expect(confined.code, confined.stderr).toBe(0);
    expect(ws.read('kiln-bin/p/g.txt')).toBe('refused\nf\nread-only\n');
    // The sandbox's paths are not part of the action's key (as in Bazel): start again.
    expect((await ws.kiln(['clean'])).code).toBe(0);
    const opened = await ws.kiln([
      'build',
      '--spawn_strategy=sandboxed',
      `--sandbox_writable_path=${outside}`,
      `--sandbox_tmpfs_path=${join(ws.root, 'p/hidden')}`,
      '//p:g',
    ]);
    expect(opened.code, opened.stderr).toBe(0);
    expect(ws.read('kiln-bin/p/g.txt')).toBe('wrote\ntmpfs-writable\n');
    expect(existsSync(join(outside, 'made'))).toBe(true);
    expect(existsSync(join(ws.root, 'p/hidden/x'))).toBe(false);
    const relative = await ws.kiln(['build', '--sandbox_tmpfs_path=tmp', '//p:g']);
    expect(relative.code).toBe(2);
    expect(relative.stderr).toContain('--sandbox_tmpfs_path=tmp: must be an absolute path');
  });

  // Bazel 4.2.3 on the same workspace prints, for the first build:
  //   INFO: From Executing genrule //sub:s:\nsub-out\nINFO: From Executing genrule //:g:\nto-stderr\nto-stdout
  // and with --output_filter='^//sub' (after a clean) only the first block; a cached action prints nothing.
  it("prints a successful action's output as Bazel's INFO: From block, filtered by --output_filter", async () => {
    const ws = new E2eWorkspace({
      WORKSPACE: '',
      BUILD: [
        'genrule(name = "g", outs = ["g.txt"], cmd = "echo to-stdout; echo to-stderr >&2; echo x > $@")',
        'genrule(name = "quiet", outs = ["q.txt"], cmd = "echo q > $@")',
        '',
      ].join('\n'),
      'sub/BUILD': 'genrule(name = "s", outs = ["s.txt"], cmd = "echo sub-out; echo s > $@")\n',
    });
    const first = await ws.kiln(['build', '--spawn_strategy=local', '//...']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('INFO: From Executing genrule //:g:\nto-stderr\nto-stdout\n');
    expect(first.stderr).toContain('INFO: From Executing genrule //sub:s:\nsub-out\n');
    expect(first.stderr).not.toContain('//:quiet:');
    const cached = await ws.kiln(['build', '--spawn_strategy=local', '//...']);
    expect(cached.stderr).not.toContain('INFO: From');
    expect((await ws.kiln(['clean'])).code).toBe(0);
    const filtered = await ws.kiln(['build', '--spawn_strategy=local', '--output_filter=^//sub', '//...']);
    expect(filtered.code, filtered.stderr).toBe(0);
    expect(filtered.stderr).toContain('INFO: From Executing genrule //sub:s:\nsub-out\n');
    expect(filtered.stderr).not.toContain('//:g:');
    const bad = await ws.kiln(['build', '--output_filter=(', '//...']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('ERROR: While parsing option --output_filter=(: Failed to build valid regular expression');
  });
});
