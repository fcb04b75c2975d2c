import { tokenize, type BuildOptions, type TestSettings } from '../analysis/index.js';
import { UsageError } from '../core/index.js';
import { checkSizeFilters } from './test-selection.js';

/**
 * The test flags of a command line as TestSettings: `--test_env=NAME` takes the client's value of
 * NAME (unset: left out), `--test_timeout` is one or four positive integers (Bazel's message
 * otherwise). Throws UsageError (exit 2) for a malformed value.
 */
export function testSettingsFrom(options: BuildOptions, clientEnv: Readonly<Record<string, string | undefined>>, workspaceName: string): TestSettings {
  checkSizeFilters(options.getList('test_size_filters'));
  const env: Record<string, string> = {};
  for (const entry of options.getList('test_env')) {
    const eq = entry.indexOf('=');
    if (eq === 0)
      throw new UsageError(`While parsing option --test_env=${entry}: Variable definitions must be in the form of a 'name=value' or 'name' assignment`);
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
    else if (clientEnv[entry] !== undefined) env[entry] = clientEnv[entry]!;
  }
  const timeoutText = options.getString('test_timeout');
  const timeouts = timeoutText.split(',').map((t) => Number(t.trim()));
  const valid =
    (timeouts.length === 1 || timeouts.length === 4) && timeouts.every((t) => Number.isInteger(t) && (t > 0 || (t === -1 && timeouts.length === 1)));
  if (!valid)
    throw new UsageError(
      `While parsing option --test_timeout=${timeoutText}: Cannot parse test timeout value; use one positive integer or four comma-separated ones`,
    );
  const runsPerTest = options.getInt('runs_per_test');
  if (runsPerTest < 1) throw new UsageError(`While parsing option --runs_per_test=${runsPerTest}: must be at least 1`);
  const cache = options.getString('cache_test_results');
  return {
    args: options.getList('test_arg'),
    env,
    filter: options.getString('test_filter'),
    timeouts: timeouts.length === 1 && timeouts[0] === -1 ? [] : timeouts,
    runsPerTest,
    // Streamed output runs every test whole, one at a time, as Bazel's --test_output=streamed does.
    shardingDisabled: options.getString('test_sharding_strategy') === 'disabled' || options.getString('test_output') === 'streamed',
    cacheResults: cache === 'yes' || cache === 'no' ? cache : 'auto',
    workspaceName: workspaceName || '__main__',
    runUnder: runUnderWords(options.getString('run_under')),
  };
}

/**
 * `--run_under=COMMAND`: its words (Bazel's RunUnderConverter: a command and its options, split as
 * a shell would). The label form (`--run_under=//tools:wrapper`, built and run from its runfiles) is
 * not supported by Kiln yet: an error rather than running the test under nothing.
 */
export function runUnderWords(value: string): readonly string[] {
  if (value === '') return [];
  if (value.startsWith('//') || value.startsWith('@') || value.startsWith(':'))
    throw new UsageError(`--run_under=${value}: a target as --run_under is not supported by Kiln yet; give a command`);
  const words = tokenize(value);
  if (words.length === 0) throw new UsageError(`While parsing option --run_under=${value}: Empty command`);
  return words;
}

/** `--flaky_test_attempts`: `default` (3 for flaky = True tests, 1 otherwise) or a positive count. */
export function flakyAttemptsFrom(options: BuildOptions): (flaky: boolean) => number {
  const text = options.getString('flaky_test_attempts');
  if (text === 'default') return (flaky) => (flaky ? 3 : 1);
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 10) {
    throw new UsageError(`While parsing option --flaky_test_attempts=${text}: '${text}' is not a value of 'default' or an integer from 1 to 10`);
  }
  return () => n;
}
