/** One test target's outcome, as the closing summary reports it. */
export interface TestOutcome {
  readonly label: string;
  readonly status: 'PASSED' | 'FAILED' | 'TIMEOUT' | 'FLAKY' | 'NO STATUS' | 'FAILED TO BUILD';
  /** Every attempt of every run (shards, runs_per_test, retries), in whole milliseconds as Bazel keeps them. */
  readonly durationsMs: readonly number[];
  /** All runs came from a cache. */
  readonly cached: boolean;
  /** How many attempts (of every run) there were, and how many of them failed. */
  readonly attempts?: { readonly failed: number; readonly total: number };
  /** Absolute paths of the logs of every failed attempt (a retried attempt's log, a failed run's test.log). */
  readonly failedLogs: readonly string[];
  /** The test.xml of each run's final attempt (its test cases, for `--test_summary=detailed`). */
  readonly xmlPaths: readonly string[];
  /** Whether the test ran in this command (not cached, not failed to build, not skipped). */
  readonly executed: boolean;
  /** A run ran on a remote executor: a failure then counts as failing remotely, as in Bazel's summary. */
  readonly ranRemotely?: boolean;
}
