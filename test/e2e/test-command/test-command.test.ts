import { execFileSync } from 'node:child_process';
import { closeSync, constants, existsSync, openSync, readFileSync, realpathSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, type E2eWorkspace } from '../e2e-workspace.js';
import { fixtureFiles, fixtureWorkspace } from './fixture-workspace.js';

const LOCAL = '--spawn_strategy=local';

/** The `//label STATUS` pairs of the summary, in order. */
function statuses(stdout: string): string[] {
  return [...stdout.matchAll(/^(\/\/\S+) +((?:\(cached\) )?[A-Z][A-Z ]*[A-Z])(?:,| in|$)/gm)].map((m) => `${m[1]} ${m[2]}`);
}

function isGoneOrZombie(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /s, '')
      .startsWith('Z');
  } catch {
    return true;
  }
}

function testlogs(ws: E2eWorkspace, path: string): string {
  return readFileSync(join(ws.root, 'kiln-testlogs', path), 'utf8');
}

describe('kiln test', () => {
  it('expands test_suites (tag filters with +/-, size as a tag, nested suites, empty tests) and runs exactly their tests', async () => {
    const ws = fixtureWorkspace();
    const nested = await ws.kiln(['test', LOCAL, '//pkg:nested']);
    expect(nested.code).toBe(0);
    expect(statuses(nested.stdout)).toEqual(['//pkg:manual_test PASSED', '//pkg:pass_medium PASSED', '//pkg:pass_small PASSED']);
    expect(nested.stderr).toContain('INFO: Found 3 test targets...');
    const implicit = await ws.kiln(['test', LOCAL, '//pkg:all_implicit']);
    // Cached results come first in Bazel's summary: large is the one that ran.
    expect(statuses(implicit.stdout)).toEqual(['//pkg:pass_medium (cached) PASSED', '//pkg:pass_small (cached) PASSED', '//pkg:large PASSED']);
    const plus = await ws.kiln(['test', LOCAL, '//pkg:plus']);
    expect(statuses(plus.stdout).map((s) => s.split(' ')[0])).toEqual(['//pkg:manual_test', '//pkg:pass_small']);
  });

  it('drops manual suites and tests under wildcards but runs them when named', async () => {
    const ws = fixtureWorkspace({
      'manual/BUILD': 'sh_test(name = "m", srcs = ["//pkg:pass.sh"], tags = ["manual"])\ntest_suite(name = "s", tests = [":m"], tags = ["manual"])\n',
    });
    const wildcard = await ws.kiln(['test', LOCAL, '//manual:all']);
    expect(wildcard.code).toBe(4);
    expect(wildcard.stderr).toContain('ERROR: No test targets were found, yet testing was requested');
    const named = await ws.kiln(['test', LOCAL, '//manual:s']);
    expect(named.code).toBe(0);
    expect(statuses(named.stdout)).toEqual(['//manual:m PASSED']);
  });

  it('kiln build of a test_suite builds the tests it stands for', async () => {
    const ws = fixtureWorkspace();
    const run = await ws.kiln(['build', LOCAL, '//pkg:fast']);
    expect(run.code).toBe(0);
    for (const t of ['pass_small', 'pass_medium']) expect(existsSync(join(ws.root, 'kiln-bin/pkg', t))).toBe(true);
    expect(existsSync(join(ws.root, 'kiln-bin/pkg/large'))).toBe(false);
  });

  it('rejects a *_binary or a non-test in a test_suite, and an alias of a test_suite; an alias of a test is no test', async () => {
    const ws = fixtureWorkspace();
    const binary = await ws.kiln(['test', LOCAL, '//bad:with_binary']);
    expect(binary.code).toBe(1);
    expect(binary.stderr).toMatch(
      /ERROR: bad\/BUILD:2:\d+: in test_suite rule '\/\/bad:with_binary': expecting a test or a test_suite rule but '\/\/bad:bin' is not one\./,
    );
    const filegroup = await ws.kiln(['test', LOCAL, '//bad:with_filegroup']);
    expect(filegroup.code).toBe(1);
    expect(filegroup.stderr).toContain("but '//bad:fg' is not one.");
    const aliasSuite = await ws.kiln(['test', LOCAL, '//bad:alias_suite']);
    expect(aliasSuite.code).toBe(1);
    expect(aliasSuite.stderr).toContain('//bad:alias_suite');
    const aliasTest = await ws.kiln(['test', LOCAL, '//aliases:alias_test']);
    expect(aliasTest.code).toBe(4);
    expect(aliasTest.stderr).toContain('INFO: Found 1 target and 0 test targets...');
  });

  it("gives the test Bazel's environment, its arguments and a runfiles tree with a MANIFEST; --test_output=all prints the log", async () => {
    const ws = fixtureWorkspace();
    const run = await ws.kiln(['test', LOCAL, '--test_output=all', '--test_env=FOO=bar', '--test_arg=--extra', '--test_filter=Some.filter', '//env:env']);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('INFO: From Testing //env:env:');
    const out = run.stdout;
    expect(out).toContain('==================== Test output for //env:env:\nargs: from-rule --extra\n');
    for (const line of [
      'TEST_TARGET=//env:env',
      'TEST_WORKSPACE=__main__',
      'TEST_SIZE=small',
      'TEST_TIMEOUT=60',
      'TZ=UTC',
      'FOO=bar',
      'RULE_ENV=rule-value',
      'TESTBRIDGE_TEST_ONLY=Some.filter',
      'TEST_BINARY=env/env',
      'pwd ends with: /__main__',
      'data: some data',
    ]) {
      expect(out).toContain(`${line}\n`);
    }
    for (const name of [
      'TEST_TMPDIR',
      'TEST_SRCDIR',
      'RUNFILES_DIR',
      'XML_OUTPUT_FILE',
      'TEST_UNDECLARED_OUTPUTS_DIR',
      'HOME',
      'TEST_PREMATURE_EXIT_FILE',
      'TEST_INFRASTRUCTURE_FAILURE_FILE',
    ]) {
      expect(out).toContain(`${name} is set: yes\n`);
    }
    expect(out).toContain('manifest:\n__main__/env/data.txt\n__main__/env/env\n__main__/env/env.sh\n');
    expect(readFileSync(join(ws.root, 'kiln-bin/env/env.runfiles/MANIFEST'), 'utf8')).toBe(
      '__main__/env/data.txt env/data.txt\n__main__/env/env bazel-out/k8-fastbuild/bin/env/env\n__main__/env/env.sh env/env.sh\n',
    );
    expect(readFileSync(join(ws.root, 'kiln-bin/env/env.runfiles/__main__/env/data.txt'), 'utf8')).toBe('some data\n');
    expect(existsSync(join(ws.root, 'kiln-bin/env/env.runfiles_manifest'))).toBe(true);
    // Logs, generated XML and the undeclared outputs, zipped.
    expect(testlogs(ws, 'env/env/test.log')).toMatch(
      /^exec \$\{PAGER:-\/usr\/bin\/less\} "\$0" \|\| exit 1\nExecuting tests from \/\/env:env\n-{77}\nargs: from-rule --extra\n/,
    );
    const xml = testlogs(ws, 'env/env/test.xml');
    expect(xml).toContain('<testsuite name="env/env" tests="1" failures="0" errors="0">');
    expect(xml).toContain('<system-out><![CDATA[');
    const listing = execFileSync('unzip', ['-l', join(ws.root, 'kiln-testlogs/env/env/test.outputs/outputs.zip')], { encoding: 'utf8' });
    expect(listing).toContain('extra.txt');
  });

  it("expands $(location) (a runfiles path) and Make variables in the rule's args and env", async () => {
    const ws = fixtureWorkspace({
      'loc/BUILD':
        'sh_test(name = "loc", srcs = ["loc.sh"], data = ["//env:data.txt"], size = "small",\n' +
        '    args = ["$(location //env:data.txt)", "\'two words\'"], env = {"MODE": "$(COMPILATION_MODE)", "DATA": "$(rootpath //env:data.txt)"})\n',
      'loc/loc.sh': '#!/bin/sh\nprintf "[%s]" "$@"; echo; echo "$MODE $DATA"; cat "$1"\n',
      'env/BUILD': 'exports_files(["data.txt"])\n' + fixtureFiles()['env/BUILD'],
    });
    const run = await ws.kiln(['test', LOCAL, '--test_output=all', '//loc:loc']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('[env/data.txt][two words]\nfastbuild env/data.txt\nsome data\n');
    ws.write({ 'loc/BUILD': 'sh_test(name = "loc", srcs = ["loc.sh"], args = ["$(location //env:data.txt)"])\n' });
    const missing = await ws.kiln(['test', LOCAL, '//loc:loc']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/ERROR: loc\/BUILD:1:1: in args attribute of sh_test rule \/\/loc:loc: .*not a declared prerequisite/);
  });

  it('runs Starlark rules with test = True like any test: executable, runfiles, args, size, suites', async () => {
    const ws = fixtureWorkspace({
      'star/defs.bzl': [
        'def _impl(ctx):',
        '    out = ctx.actions.declare_file(ctx.label.name + ".sh")',
        '    ctx.actions.write(out, "#!/bin/sh\\necho starlark $1 $TEST_SIZE\\ncat star/data.txt\\nexit %d\\n" % ctx.attr.code, is_executable = True)',
        '    return [DefaultInfo(executable = out, runfiles = ctx.runfiles(files = ctx.files.data))]',
        'my_test = rule(implementation = _impl, test = True, attrs = {"code": attr.int(), "data": attr.label_list(allow_files = True)})',
        '',
      ].join('\n'),
      'star/data.txt': 'hello\n',
      'star/BUILD':
        'load(":defs.bzl", "my_test")\n' +
        'my_test(name = "ok_test", data = ["data.txt"], args = ["arg1"], size = "small")\n' +
        'my_test(name = "bad_test", code = 2, data = ["data.txt"])\n' +
        'test_suite(name = "suite")\n',
    });
    const run = await ws.kiln(['test', LOCAL, '--test_output=all', '//star:suite']);
    expect(run.code).toBe(3);
    expect(run.stdout).toContain('==================== Test output for //star:ok_test:\nstarlark arg1 small\nhello\n');
    expect(statuses(run.stdout)).toEqual(['//star:ok_test PASSED', '//star:bad_test FAILED']);
    expect(testlogs(ws, 'star/bad_test/test.xml')).toContain('<error message="exited with error code 2"></error>');
  });

  it('--test_output=streamed: the output reaches stdout through a pipe while the test runs, sandboxed too; test.log keeps it all', async () => {
    const ws = fixtureWorkspace({
      'streamed/BUILD': 'sh_test(name = "a", srcs = ["t.sh"], size = "small")\n',
      'streamed/t.sh': '#!/bin/sh\necho "live from $TEST_TARGET"\nread word < "$GATES/a.gate"\necho "$word $TEST_TARGET" >&2\n',
    });
    // The test prints a line, then waits on a named pipe the harness writes only once that line is on
    // kiln's stdout: the test can end only if its output is shown while it runs. A sandboxed test sees
    // the host directories of its inputs: the gate goes beside its executable in its runfiles tree,
    // which a first run makes (the test finds no gate there and passes at once).
    expect((await ws.kiln(['test', '--test_env=GATES=/nonexistent', '//streamed:a'])).code).toBe(0);
    const gates = realpathSync(join(ws.root, 'kiln-bin/streamed/a.runfiles/__main__/streamed'));
    const gate = join(gates, 'a.gate');
    execFileSync('mkfifo', [gate]);
    let released = false;
    const release = (stdout: string) => {
      if (released || !stdout.includes('live from //streamed:a\n')) return;
      released = true;
      // Opening a pipe's write end waits for its reader: off the event loop.
      void writeFile(gate, 'released\n').catch(() => {});
    };
    try {
      const run = await ws.kiln(
        ['test', '--test_output=streamed', `--test_env=GATES=${gates}`, '--test_timeout=20', '//streamed:a'],
        ws.root,
        undefined,
        release,
      );
      expect(run.code).toBe(0);
      expect(run.stderr).toContain('WARNING: Streamed test output requested. All tests will be run locally, without sharding, one at a time\n');
      // Only what the test wrote: no log header, no per-test output block.
      expect(run.stdout).toMatch(/^live from \/\/streamed:a\nreleased \/\/streamed:a\n\/\/streamed:a +PASSED/);
      expect(testlogs(ws, 'streamed/a/test.log')).toMatch(/\n-{77}\nlive from \/\/streamed:a\nreleased \/\/streamed:a\n$/);
    } finally {
      // A gate left unread would hold its writer forever: open and close its read end.
      closeSync(openSync(gate, constants.O_RDONLY | constants.O_NONBLOCK));
    }
  }, 120_000);

  it('--test_output=streamed runs the tests one at a time, each whole, their outputs in turn', async () => {
    const ws = fixtureWorkspace({
      'streamed/BUILD': 'sh_test(name = "a", srcs = ["t.sh"], size = "small")\nsh_test(name = "b", srcs = ["t.sh"], size = "small", shard_count = 2)\n',
      'streamed/t.sh': '#!/bin/sh\necho "start $TEST_TARGET ${TEST_SHARD_INDEX-unsharded}"\necho "end $TEST_TARGET"\n',
    });
    const run = await ws.kiln(['test', '--test_output=streamed', '//streamed:all']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^start \/\/streamed:a unsharded\nend \/\/streamed:a\nstart \/\/streamed:b unsharded\nend \/\/streamed:b\n/);
  });

  it("env_inherit takes the client's value when the test runs; the rule's env wins", async () => {
    const ws = fixtureWorkspace({
      'inherit/BUILD':
        'sh_test(name = "i", srcs = ["i.sh"], size = "small", env_inherit = ["KILN_E2E_A", "KILN_E2E_B", "KILN_E2E_UNSET"], env = {"KILN_E2E_B": "rule"})\n',
      'inherit/i.sh': '#!/bin/sh\necho "A=$KILN_E2E_A B=$KILN_E2E_B unset=${KILN_E2E_UNSET-none}"\n',
    });
    const run = (a: string) =>
      ws.kiln(['test', LOCAL, '--test_output=all', '//inherit:i'], ws.root, undefined, undefined, { KILN_E2E_A: a, KILN_E2E_B: 'client' });
    expect((await run('one')).stdout).toContain('A=one B=rule unset=none\n');
    // Another value is another action: not the cached result of the first.
    const second = await run('two');
    expect(second.stdout).toContain('A=two B=rule unset=none\n');
    expect(statuses(second.stdout)).toEqual(['//inherit:i PASSED']);
  });

  it('keeps an XML file the test writes itself', async () => {
    const ws = fixtureWorkspace({
      'xml/BUILD': 'sh_test(name = "own", srcs = ["own.sh"], size = "small")\n',
      'xml/own.sh': '#!/bin/sh\necho "<testsuites><testsuite name=\\"mine\\"/></testsuites>" > "$XML_OUTPUT_FILE"\n',
    });
    expect((await ws.kiln(['test', LOCAL, '//xml:own'])).code).toBe(0);
    expect(testlogs(ws, 'xml/own/test.xml')).toBe('<testsuites><testsuite name="mine"/></testsuites>\n');
  });

  it('fails with exit code 3, the log path and a generated XML naming the exit code; --test_output=errors prints the log', async () => {
    const ws = fixtureWorkspace();
    const run = await ws.kiln(['test', LOCAL, '--test_output=errors', '//failing:all']);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/^FAIL: \/\/failing:fail \(see \/.*\/bazel-out\/k8-fastbuild\/testlogs\/failing\/fail\/test\.log\)$/m);
    expect(run.stdout).toContain('==================== Test output for //failing:fail:\nfailing now\n' + '='.repeat(80) + '\n');
    expect(run.stdout).not.toContain('Test output for //failing:pass');
    expect(run.stdout).toMatch(/^\/\/failing:fail +FAILED in \d+\.\ds\n  \/.*\/testlogs\/failing\/fail\/test\.log\n/m);
    expect(run.stdout).toContain('Executed 2 out of 2 tests: 1 test passes and 1 fails locally.');
    expect(run.stderr).toContain('INFO: Build completed, 1 test FAILED, ');
    expect(testlogs(ws, 'failing/fail/test.xml')).toContain('<error message="exited with error code 1"></error>');
  });

  it('caches a passing test (shown "(cached) PASSED"), runs it again when it changes, and never caches a failure', async () => {
    const ws = fixtureWorkspace();
    expect(statuses((await ws.kiln(['test', LOCAL, '//failing:all'])).stdout)).toEqual(['//failing:pass PASSED', '//failing:fail FAILED']);
    const again = await ws.kiln(['test', LOCAL, '//failing:all']);
    expect(statuses(again.stdout)).toEqual(['//failing:pass (cached) PASSED', '//failing:fail FAILED']);
    expect(again.stdout).toContain('Executed 1 out of 2 tests: 1 test passes and 1 fails locally.');
    ws.write({ 'failing/fail.sh': '#!/bin/sh\necho fixed\n' });
    const fixed = await ws.kiln(['test', LOCAL, '//failing:all']);
    expect(fixed.code).toBe(0);
    expect(statuses(fixed.stdout)).toEqual(['//failing:pass (cached) PASSED', '//failing:fail PASSED']);
    const none = await ws.kiln(['test', LOCAL, '--nocache_test_results', '//failing:pass']);
    expect(statuses(none.stdout)).toEqual(['//failing:pass PASSED']);
    expect(none.stdout).toContain('Executed 1 out of 1 test: 1 test passes.');
  });

  it('a re-run in the work tree starts from empty test directories: what the last run left is removed first', async () => {
    const ws = fixtureWorkspace({
      'left/BUILD': 'sh_test(name = "left", srcs = ["left.sh"], size = "small")\n',
      'left/left.sh':
        '#!/bin/sh\n' +
        'echo "annotations: $(ls -A "$TEST_UNDECLARED_OUTPUTS_ANNOTATIONS_DIR") undeclared: $(ls -A "$TEST_UNDECLARED_OUTPUTS_DIR") tmp: $(ls -A "$TEST_TMPDIR")"\n' +
        'echo a > "$TEST_UNDECLARED_OUTPUTS_ANNOTATIONS_DIR/a.txt"; echo u > "$TEST_UNDECLARED_OUTPUTS_DIR/u$$.txt"; echo t > "$TEST_TMPDIR/t.txt"\n' +
        'echo w > "$TEST_WARNINGS_OUTPUT_FILE"\n',
    });
    for (let run = 0; run < 2; run++) {
      const result = await ws.kiln(['test', LOCAL, '--nocache_test_results', '--test_output=all', '//left:left']);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('annotations:  undeclared:  tmp: \n');
      const listing = execFileSync('unzip', ['-Z1', join(ws.root, 'kiln-testlogs/left/left/test.outputs/outputs.zip')], { encoding: 'utf8' });
      expect(listing.trim().split('\n')).toHaveLength(1);
    }
  });

  it('takes a passing result from the disk cache in a fresh output base, as any other action', async () => {
    const cache = tempDir();
    const first = fixtureWorkspace();
    expect((await first.kiln(['test', LOCAL, `--disk_cache=${cache}`, '//failing:all'])).code).toBe(3);
    const second = fixtureWorkspace();
    const run = await second.kiln(['test', LOCAL, `--disk_cache=${cache}`, '//failing:all']);
    expect(statuses(run.stdout)).toEqual(['//failing:pass (cached) PASSED', '//failing:fail FAILED']);
    expect(run.stderr).toMatch(/INFO: \d+ processes: \d+ disk cache hit/);
    expect(testlogs(second, 'failing/pass/test.log')).toContain('pass //failing:pass');
  });

  it('rejects malformed test flags with exit code 2', async () => {
    const ws = fixtureWorkspace();
    for (const [flag, message] of [
      ['--test_timeout=1,2', 'While parsing option --test_timeout=1,2'],
      ['--test_output=loud', "While parsing option --test_output=loud: Not a valid test output mode: 'loud'"],
      ['--flaky_test_attempts=0', 'While parsing option --flaky_test_attempts=0'],
      ['--runs_per_test=0', 'While parsing option --runs_per_test=0'],
      ['--cache_test_results=maybe', 'While parsing option --cache_test_results=maybe'],
    ] as const) {
      const run = await ws.kiln(['test', flag, '//pkg:pass_small']);
      expect(run.code, flag).toBe(2);
      expect(run.stderr).toContain(message);
    }
  });

  it('runs a test tagged exclusive alone, after the others', async () => {
    const ws = fixtureWorkspace({
      'exclusive/BUILD':
        'sh_test(name = "normal", srcs = ["normal.sh"], size = "small", tags = ["no-sandbox"])\n' +
        'sh_test(name = "alone", srcs = ["alone.sh"], size = "small", tags = ["exclusive", "no-sandbox"])\n',
      // Without exclusive, alone would run while normal waits (--jobs=4).
      'exclusive/normal.sh': '#!/bin/sh\necho "normal start" >> "$ORDER"; sleep 0.5; echo "normal end" >> "$ORDER"\n',
      'exclusive/alone.sh': '#!/bin/sh\necho alone >> "$ORDER"\n',
    });
    const order = join(tempDir(), 'order');
    const run = await ws.kiln(['test', LOCAL, '--jobs=4', `--test_env=ORDER=${order}`, '//exclusive:all']);
    expect(run.code).toBe(0);
    expect(readFileSync(order, 'utf8')).toBe('normal start\nnormal end\nalone\n');
  });

  it('splits a sharded test into shards with their own index, logs and stats', async () => {
    const ws = fixtureWorkspace();
    const run = await ws.kiln(['test', LOCAL, '//shard:sharded']);
    expect(run.code).toBe(0);
    for (let i = 1; i <= 3; i++) expect(testlogs(ws, `shard/sharded/shard_${i}_of_3/test.log`)).toContain(`shard ${i - 1} of 3\n`);
    expect(run.stdout).toMatch(
      /^\/\/shard:sharded +PASSED in \d+\.\ds\n  Stats over 3 runs: max = \d+\.\ds, min = \d+\.\ds, avg = \d+\.\ds, dev = \d+\.\ds\n/m,
    );
  });

  it('--runs_per_test runs each test that many times, never from the cache', async () => {
    const ws = fixtureWorkspace();
    for (let i = 0; i < 2; i++) {
      const run = await ws.kiln(['test', LOCAL, '--runs_per_test=2', '//pkg:pass_small']);
      expect(statuses(run.stdout)).toEqual(['//pkg:pass_small PASSED']);
      expect(run.stdout).toContain('Stats over 2 runs');
    }
    expect(testlogs(ws, 'pkg/pass_small/run_2_of_2/test.log')).toContain('pass //pkg:pass_small');
  });

  it('kills a test that outlives its timeout with its whole process group and reports TIMEOUT', async () => {
    const ws = fixtureWorkspace();
    const pidFile = join(tempDir(), 'sleepy.pid');
    const run = await ws.kiln(['test', LOCAL, '--test_timeout=2', `--test_env=SLEEPY_PID_FILE=${pidFile}`, '//slow:sleepy']);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/^TIMEOUT: \/\/slow:sleepy \(Summary\)\n {6}\/.*\/testlogs\/slow\/sleepy\/test\.log$/m);
    expect(run.stdout).toMatch(/^\/\/slow:sleepy +TIMEOUT in \d+\.\ds$/m);
    expect(run.stderr).toContain('INFO: Build completed, 1 test FAILED');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    // The test's background child was in its process group: killed before kiln test returns (at
    // most a zombie until its new parent reaps it).
    expect(isGoneOrZombie(pid)).toBe(true);
  });

  it('retries a failing flaky test and reports FLAKY with the failed attempt log', async () => {
    const ws = fixtureWorkspace();
    const dir = tempDir();
    const run = await ws.kiln(['test', LOCAL, '--flaky_test_attempts=3', `--test_env=FLAKY_DIR=${dir}`, '//flaky:flaky']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^\/\/flaky:flaky +FLAKY, failed in 1 out of 2 in \d+\.\ds\n  Stats over 2 runs: .*\n  \/.*\/testlogs\/flaky\/flaky\/test_attempts\/attempt_1\.log\n/m,
    );
    expect(testlogs(ws, 'flaky/flaky/test_attempts/attempt_1.log')).toContain('attempt 1');
    expect(testlogs(ws, 'flaky/flaky/test.log')).toContain('attempt 2');
    expect(readFileSync(join(dir, 'count'), 'utf8').trim()).toBe('2');
    // The next run passes at once: no attempt logs are left from the last one.
    const next = await ws.kiln(['test', LOCAL, '--nocache_test_results', '--flaky_test_attempts=3', `--test_env=FLAKY_DIR=${dir}`, '//flaky:flaky']);
    expect(statuses(next.stdout)).toEqual(['//flaky:flaky PASSED']);
    expect(existsSync(join(ws.root, 'kiln-testlogs/flaky/flaky/test_attempts'))).toBe(false);
  });

  // Bazel 4.2.3's summary lines for these are pinned by reference-bazel.test.ts (runs-per-test-failing,
  // attempts-exhausted); its testlogs layout is recorded in bazel-4.2.3-testlogs.txt.
  it('a test failing every run or attempt: FAILED in N out of N, one log and test.xml per run and attempt, as Bazel lays them out', async () => {
    const recorded = readFileSync(join(import.meta.dirname, 'bazel-4.2.3-testlogs.txt'), 'utf8')
      .split('\n== ')
      .slice(1);
    expect(recorded).toHaveLength(2);
    for (const block of recorded) {
      const [command, ...files] = block.trimEnd().split('\n');
      const ws = fixtureWorkspace();
      const run = await ws.kiln([...command!.split(' ').slice(0, 1), LOCAL, ...command!.split(' ').slice(1)]);
      expect(run.code, run.stderr).toBe(3);
      const n = files.filter((f) => f.endsWith('.log')).length;
      expect(run.stdout).toMatch(new RegExp(`^//failing:fail +FAILED in ${n} out of ${n} in \\d+\\.\\ds\n  Stats over ${n} runs: `, 'm'));
      expect(run.stderr).toMatch(/^FAILED: \/\/failing:fail \(Summary\)$/m);
      // The logs and XMLs (Kiln's test.status record and test.outputs/ are its own, as Bazel's test.cache_status).
      const found = execFileSync('find', ['failing', '-type', 'f', '(', '-name', '*.log', '-o', '-name', '*.xml', ')'], {
        cwd: join(ws.root, 'kiln-testlogs'),
        encoding: 'utf8',
      })
        .split('\n')
        .filter(Boolean)
        .sort();
      expect(found, command).toEqual(files);
      // Every log printed under the summary line exists and holds that attempt's output.
      const logs = [...run.stdout.matchAll(/^  (\/\S+\.log)$/gm)].map((m) => m[1]!);
      expect(logs).toHaveLength(n);
      for (const log of logs) expect(readFileSync(log, 'utf8')).toContain('failing now');
      for (const xml of files.filter((f) => f.endsWith('.xml'))) expect(testlogs(ws, xml)).toContain('<testsuites>');
    }
  });

  it('--test_tag_filters and --test_size_filters choose the tests; --build_tests_only builds only them', async () => {
    const ws = fixtureWorkspace();
    const tags = await ws.kiln(['test', LOCAL, '--test_tag_filters=fast,-slowish', '//pkg:all']);
    expect(statuses(tags.stdout).map((s) => s.split(' ')[0])).toEqual(['//pkg:manual_test', '//pkg:pass_small']);
    const sizes = await ws.kiln(['test', LOCAL, '--test_size_filters=small,large', '//pkg:all']);
    expect(
      statuses(sizes.stdout)
        .map((s) => s.split(' ')[0])
        .sort(),
    ).toEqual(['//pkg:large', '//pkg:manual_test', '//pkg:pass_small']);
    const bad = await ws.kiln(['test', LOCAL, '--test_size_filters=tiny', '//pkg:all']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Only small, medium, large, enormous are allowed test sizes');
    const only = await ws.kiln(['test', LOCAL, '--build_tests_only', '--keep_going', '//broken:fine', '//broken:gen']);
    expect(only.code).toBe(0);
    expect(only.stderr).not.toContain('genrule //broken:gen');
  });

  it('reports FAILED TO BUILD when an action a test needs fails (--keep_going), exit code 1', async () => {
    const ws = fixtureWorkspace();
    const run = await ws.kiln(['test', LOCAL, '--keep_going', '//broken:all']);
    expect(run.code).toBe(1);
    expect(statuses(run.stdout)).toEqual(['//broken:broken FAILED TO BUILD', '//broken:fine PASSED']);
    expect(run.stdout).toContain('Executed 1 out of 2 tests: 1 test passes and 1 fails to build.');
  });

  it('runs tests in the sandbox by default, with the runfiles as inputs', async () => {
    const ws = fixtureWorkspace();
    const run = await ws.kiln(['test', '--test_output=errors', '//env:env', '//failing:pass']);
    expect(run.code).toBe(0);
    expect(statuses(run.stdout)).toEqual(['//env:env PASSED', '//failing:pass PASSED']);
  });
});
