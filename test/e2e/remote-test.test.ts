import { chmodSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace } from './e2e-workspace.js';
import { startKilnCluster } from './kiln-cluster.js';
import { needTool } from '../setup/need-tool.js';

/**
 * `kiln test` on the cluster: a test action's exit code is its result through remote execution and
 * the remote cache, its files come back whatever that result, and the server enforces its timeout.
 */
const TESTS = {
  'MODULE.bazel': 'module(name = "remote_tests")\n',
  'pkg/data.txt': 'data\n',
  'pkg/BUILD': [
    'sh_test(name = "pass", size = "small", srcs = ["pass.sh"], data = ["data.txt"], shard_count = 2, env = {"FROM_RULE": "rule"})',
    'sh_test(name = "fail", size = "small", srcs = ["fail.sh"])',
    'sh_test(name = "slow", srcs = ["slow.sh"])',
    '',
  ].join('\n'),
  'pkg/pass.sh': [
    '#!/bin/bash',
    '[ "$TEST_TARGET" = //pkg:pass ] && [ "$TEST_TOTAL_SHARDS" = 2 ] && [ -n "$TEST_SHARD_INDEX" ] && [ "$TEST_TIMEOUT" = 20 ] \\',
    '  && [ "$FROM_RULE" = rule ] && [ "$FROM_FLAG" = flag ] && [ "$TEST_WORKSPACE" = remote_tests ] || { echo "unexpected environment"; env; exit 1; }',
    'echo scratch > "$TEST_TMPDIR/scratch.txt" || exit 1',
    'touch "$TEST_SHARD_STATUS_FILE"',
    'echo "shard $TEST_SHARD_INDEX of $TEST_TOTAL_SHARDS reads $(cat pkg/data.txt)"',
    'echo undeclared > "$TEST_UNDECLARED_OUTPUTS_DIR/shard$TEST_SHARD_INDEX.txt"',
    '',
  ].join('\n'),
  'pkg/fail.sh': '#!/bin/bash\necho "failing on purpose"\nexit 1\n',
  // Runs past its timeout and ignores SIGTERM, so the setup script's own timeout could only end it
  // 15 s later (with SIGKILL): ended sooner, it was the server that enforced Action.timeout.
  'pkg/slow.sh': '#!/bin/bash\ntrap \'\' TERM\necho "about to hang"\nsleep 60\n',
};

// Small tests (pass, fail) get 20 s, the medium one (slow) 2 s.
const TEST_FLAGS = ['--test_timeout=20,2,2,2', '--test_env=FROM_FLAG=flag'];
const processes = (stderr: string) => /INFO: \d+ process(?:es)?[:.][^\n]*/.exec(stderr)?.[0];
const statusLine = (stdout: string, label: string) => new RegExp(`^${label}\\s+(\\S.*)$`, 'm').exec(stdout)?.[1];
const ranTest = (stderr: string, label: string) => new RegExp(`\\] Testing ${label}\\b`).test(stderr);

function newCheckout(): E2eWorkspace {
  const ws = new E2eWorkspace(TESTS);
  for (const script of ['pass.sh', 'fail.sh', 'slow.sh']) chmodSync(join(ws.root, 'pkg', script), 0o755);
  return ws;
}

/** The first run on a cluster: every test runs remotely, with its result and files as Bazel has them. */
async function runEveryTestRemotely(endpoint: string): Promise<E2eWorkspace> {
  const ws = newCheckout();
  const run = await ws.kiln(['test', `--remote_executor=${endpoint}`, '--spawn_strategy=remote', ...TEST_FLAGS, '//pkg:all']);
  expect(run.code, run.stderr).toBe(3);
  expect(statusLine(run.stdout, '//pkg:pass')).toMatch(/^PASSED in \d+\.\ds$/);
  expect(statusLine(run.stdout, '//pkg:fail')).toMatch(/^FAILED in \d+\.\ds$/);
  expect(statusLine(run.stdout, '//pkg:slow')).toMatch(/^TIMEOUT in \d+\.\ds$/);
  expect(run.stdout).toContain('Executed 3 out of 3 tests: 1 test passes and 2 fail remotely.');
  expect(run.stderr).toContain('TIMEOUT: //pkg:slow (Summary)');
  expect(run.stderr).toMatch(/FAIL: \/\/pkg:fail \(see \S+\/testlogs\/pkg\/fail\/test\.log\)/);
  // Every test run went to the cluster (4); the 3 executable copies and 3 runfiles trees are Kiln's own
  // work, as Bazel counts its symlink actions: internal.
  expect(processes(run.stderr)).toBe('INFO: 10 processes: 6 internal, 4 remote.');

  // Logs, XML and undeclared outputs came back for every result.
  for (const shard of [0, 1]) {
    const dir = `kiln-testlogs/pkg/pass/shard_${shard + 1}_of_2`;
    expect(ws.read(`${dir}/test.log`)).toContain(`shard ${shard} of 2 reads data`);
    expect(ws.read(`${dir}/test.xml`)).toContain('<testsuite name="pkg/pass_shard_');
    expect(readFileSync(join(ws.root, dir, 'test.outputs/outputs.zip')).includes(`shard${shard}.txt`)).toBe(true);
  }
  expect(ws.read('kiln-testlogs/pkg/fail/test.log')).toContain('failing on purpose');
  expect(ws.read('kiln-testlogs/pkg/fail/test.xml')).toContain('exited with error code 1');
  // The server killed the slow test at its timeout: what it logged came back, the status and the XML say so.
  expect(ws.read('kiln-testlogs/pkg/slow/test.log')).toContain('about to hang');
  const status = ws.read('kiln-testlogs/pkg/slow/test.status');
  expect(status).toContain('timed_out=1');
  expect(Number(/duration_ms=(\d+)/.exec(status)?.[1])).toBeLessThan(15_000);
  expect(ws.read('kiln-testlogs/pkg/slow/test.xml')).toContain('errors="1"');
  return ws;
}

describe('kiln test against kiln cluster up (REAPI)', () => {
  it('runs tests remotely: exit code as result, files downloaded whatever it is, server-side timeout, passing results cached for another checkout (also as a remote cache of local runs), failures never', {
    timeout: 180_000,
  }, async () => {
    const cluster = await startKilnCluster();
    await runEveryTestRemotely(cluster.endpoint);

    // Another path, another output base, builds without the bytes: the passing test comes from the
    // cluster's cache; the failed and timed-out ones were never cached, so they run again.
    const second = newCheckout();
    const remote = `--remote_executor=${cluster.endpoint}`;
    const again = await second.kiln(['test', remote, '--strategy=TestRunner=remote', '--remote_download_minimal', ...TEST_FLAGS, '//pkg:all']);
    expect(again.code, again.stderr).toBe(3);
    expect(statusLine(again.stdout, '//pkg:pass')).toMatch(/^\(cached\) PASSED in \d+\.\ds$/);
    expect(statusLine(again.stdout, '//pkg:fail')).toMatch(/^FAILED in/);
    expect(statusLine(again.stdout, '//pkg:slow')).toMatch(/^TIMEOUT in/);
    expect(again.stdout).toContain('Executed 2 out of 3 tests: 1 test passes and 2 fail remotely.');
    expect(ranTest(again.stderr, '//pkg:pass')).toBe(false);
    expect(ranTest(again.stderr, '//pkg:fail')).toBe(true);
    // Test files come down even under --remote_download_minimal.
    expect(second.read('kiln-testlogs/pkg/pass/shard_2_of_2/test.log')).toContain('shard 1 of 2 reads data');
    expect(second.read('kiln-testlogs/pkg/fail/test.log')).toContain('failing on purpose');

    // Dynamic execution races a local run of the test against the remote one; the result is the same.
    const third = await second.kiln([
      'test',
      remote,
      '--strategy=TestRunner=dynamic',
      '--dynamic_local_strategy=TestRunner=local',
      ...TEST_FLAGS,
      '//pkg:pass',
      '//pkg:fail',
    ]);
    expect(third.code, third.stderr).toBe(3);
    expect(statusLine(third.stdout, '//pkg:pass')).toMatch(/^\(cached\) PASSED/);
    expect(statusLine(third.stdout, '//pkg:fail')).toMatch(/^FAILED in/);
    expect(third.stdout).toMatch(/Executed 1 out of 2 tests: 1 test passes and 1 fails (locally|remotely)\./);

    // The cluster as a remote cache of tests run here: a pass comes from it, a local failure is not uploaded.
    const cacheOnly = ['test', `--remote_cache=${cluster.endpoint}`, '--spawn_strategy=local', ...TEST_FLAGS, '//pkg:pass', '//pkg:fail'];
    const local = await newCheckout().kiln(cacheOnly);
    expect(local.code, local.stderr).toBe(3);
    expect(statusLine(local.stdout, '//pkg:pass')).toMatch(/^\(cached\) PASSED/);
    expect(local.stdout).toContain('Executed 1 out of 2 tests: 1 test passes and 1 fails locally.');
    const localAgain = await newCheckout().kiln(cacheOnly);
    expect(statusLine(localAgain.stdout, '//pkg:fail')).toMatch(/^FAILED in/);
    expect(ranTest(localAgain.stderr, '//pkg:fail')).toBe(true);
  });

  const dockerHost = process.env['KILN_DOCKER_HOST'];
  it.skipIf(
    !needTool('Docker', dockerHost !== undefined && dockerHost !== '', 'KILN_DOCKER_HOST is unset; run scripts/test-setup.d/20-docker.sh (npm test does)'),
  )('runs tests on cluster up --runner docker the same way', { timeout: 240_000 }, async () => {
    const cluster = await startKilnCluster(['--executors', '1', '--runner', 'docker'], process.cwd(), { ...process.env, DOCKER_HOST: dockerHost });
    await runEveryTestRemotely(cluster.endpoint);
  });
});
