import { describe, expect, it } from 'vitest';
import type { TestOutcome } from '../../src/build/index.js';
import { formatExecutedLine, formatStats, formatTestLines, seconds, sortOutcomes } from '../../src/cli/test-summary.js';

const outcome = (label: string, status: TestOutcome['status'], extra: Partial<TestOutcome> = {}): TestOutcome => ({
  label,
  status,
  durationsMs: status === 'NO STATUS' || status === 'FAILED TO BUILD' ? [] : [250],
  cached: false,
  failedLogs: [],
  xmlPaths: [],
  executed: status !== 'NO STATUS' && status !== 'FAILED TO BUILD',
  ...extra,
});

describe("kiln test's summary, in Bazel's words", () => {
  it('pads the label so the status ends at column 78, then the time; (cached) is part of the status', () => {
    expect(formatTestLines(outcome('//pkg:t', 'PASSED'))).toBe(`//pkg:t${' '.repeat(65)} PASSED in 0.3s\n`);
    expect(formatTestLines(outcome('//pkg:t', 'PASSED', { cached: true }))).toBe(`//pkg:t${' '.repeat(56)} (cached) PASSED in 0.3s\n`);
    expect(formatTestLines(outcome('//pkg:b', 'FAILED TO BUILD'))).toBe(`//pkg:b${' '.repeat(56)} FAILED TO BUILD\n`);
    const long = `//${'x'.repeat(80)}:t`;
    expect(formatTestLines(outcome(long, 'FAILED', { failedLogs: ['/x/test.log'] }))).toBe(`${long} FAILED in 0.3s\n  /x/test.log\n`);
  });

  // Bazel's TestSummaryPrinter.getAttemptSummary: FLAKY says `, failed in F out of N`, FAILED and
  // TIMEOUT ` in F out of N`, both only when there were several attempts; then the time and, for
  // several attempts, the Stats line (Bazel 4.2.3 recorded the same: test/e2e/test-command).
  it('several attempts: how many failed, the longest time, the Stats line, every failed log', () => {
    const flaky = outcome('//f:f', 'FLAKY', { durationsMs: [100, 300], attempts: { failed: 1, total: 2 }, failedLogs: ['/a/attempt_1.log'] });
    expect(formatTestLines(flaky)).toBe(
      `//f:f${' '.repeat(68)} FLAKY, failed in 1 out of 2 in 0.3s\n  Stats over 2 runs: max = 0.3s, min = 0.1s, avg = 0.2s, dev = 0.1s\n  /a/attempt_1.log\n`,
    );
    const runs = outcome('//t:bad', 'FAILED', {
      durationsMs: [120, 90],
      attempts: { failed: 2, total: 2 },
      failedLogs: ['/t/run_1_of_2/test.log', '/t/run_2_of_2/test.log'],
    });
    expect(formatTestLines(runs)).toBe(
      `//t:bad${' '.repeat(65)} FAILED in 2 out of 2 in 0.1s\n  Stats over 2 runs: max = 0.1s, min = 0.1s, avg = 0.1s, dev = 0.0s\n  /t/run_1_of_2/test.log\n  /t/run_2_of_2/test.log\n`,
    );
    const retried = outcome('//t:bad', 'TIMEOUT', { durationsMs: [1, 2, 3], attempts: { failed: 3, total: 3 }, failedLogs: [] });
    expect(formatTestLines(retried).split('\n')[0]).toBe(`//t:bad${' '.repeat(64)} TIMEOUT in 3 out of 3 in 0.0s`);
    // One attempt: no count.
    expect(formatTestLines(outcome('//t:one', 'FAILED', { attempts: { failed: 1, total: 1 } }))).toBe(`//t:one${' '.repeat(65)} FAILED in 0.3s\n`);
    expect(formatStats([1000, 1000, 1000])).toBe('Stats over 3 runs: max = 1.0s, min = 1.0s, avg = 1.0s, dev = 0.0s');
  });

  it("times as Bazel's timeInSec and getTimeSummary compute them", () => {
    // %.1f rounds half up: 150 ms is 0.2s (toFixed on 0.15 would say 0.1s).
    expect([0, 49, 50, 149, 150, 1049, 61_950].map(seconds)).toEqual(['0.0s', '0.0s', '0.1s', '0.1s', '0.2s', '1.0s', '62.0s']);
    // The mean (183.3 ms) and deviation are cut to whole milliseconds before rounding.
    expect(formatStats([100, 200, 250])).toBe('Stats over 3 runs: max = 0.3s, min = 0.1s, avg = 0.2s, dev = 0.1s');
    expect(formatStats([140, 160])).toBe('Stats over 2 runs: max = 0.2s, min = 0.1s, avg = 0.2s, dev = 0.0s');
  });

  it('the Executed line: passes, fails to build, fails locally, skipped, joined with commas and "and"', () => {
    expect(formatExecutedLine([outcome('//a:a', 'PASSED')])).toBe('Executed 1 out of 1 test: 1 test passes.');
    expect(formatExecutedLine([outcome('//a:a', 'PASSED', { executed: false, cached: true }), outcome('//a:b', 'PASSED')])).toBe(
      'Executed 1 out of 2 tests: 2 tests pass.',
    );
    expect(
      formatExecutedLine([
        outcome('//a:a', 'PASSED'),
        outcome('//a:b', 'FAILED TO BUILD'),
        outcome('//a:c', 'TIMEOUT'),
        outcome('//a:d', 'FAILED'),
        outcome('//a:e', 'NO STATUS'),
      ]),
    ).toBe('Executed 3 out of 5 tests: 1 test passes, 1 fails to build, 2 fail locally and 1 was skipped.');
  });

  it('counts a test that failed on a remote executor as failing remotely, as Bazel does', () => {
    const line = formatExecutedLine([
      outcome('//a:a', 'FAILED', { ranRemotely: true }),
      outcome('//a:b', 'TIMEOUT', { ranRemotely: true }),
      outcome('//a:c', 'FAILED'),
      outcome('//a:d', 'PASSED', { ranRemotely: true }),
    ]);
    expect(line).toBe('Executed 4 out of 4 tests: 1 test passes, 1 fails locally and 2 fail remotely.');
  });

  it('sorts as Bazel: cached (and never run) first, then by status, then by label', () => {
    const sorted = sortOutcomes([
      outcome('//b:z', 'FAILED'),
      outcome('//b:a', 'PASSED'),
      outcome('//a:z', 'PASSED', { cached: true }),
      outcome('//c:c', 'FAILED TO BUILD'),
      outcome('//a:b', 'PASSED'),
    ]);
    expect(sorted.map((o) => o.label)).toEqual(['//a:z', '//c:c', '//a:b', '//b:a', '//b:z']);
  });
});
