import type { OptionDefinition } from '../../core/options/index.js';

/**
 * The options of `kiln test`, with Bazel's names and defaults. As in Bazel, `kiln build` accepts them
 * too. Those that change which tests exist or how their actions look (arguments, environment,
 * timeouts, runs, shards, filters) key the analysis cache; how results are shown and reused is
 * execution-only.
 */
export const TEST_OPTION_DEFINITIONS: readonly OptionDefinition[] = [
  { name: 'test_arg', type: 'list', default: [], allowMultiple: true, converter: 'whole', help: 'Extra argument passed to each test.' },
  {
    name: 'test_env',
    type: 'list',
    default: [],
    allowMultiple: true,
    converter: 'whole',
    help: 'NAME=VALUE (or NAME, taken from the client) in the environment of tests.',
  },
  { name: 'test_filter', type: 'string', default: '', help: 'Passed to the test framework as TESTBRIDGE_TEST_ONLY.' },
  {
    name: 'test_tag_filters',
    type: 'list',
    default: [],
    allowMultiple: false,
    converter: 'comma',
    help: 'Only tests with a positive tag and none of the -tags.',
  },
  { name: 'test_size_filters', type: 'list', default: [], allowMultiple: false, converter: 'comma', help: 'Only tests of these sizes (or not of the -sizes).' },
  {
    name: 'test_timeout',
    type: 'string',
    default: '-1',
    help: 'Seconds: one value for every test, or four for short,moderate,long,eternal; -1 keeps the default.',
  },
  { name: 'runs_per_test', type: 'int', default: 1, help: 'Runs of each test.' },
  { name: 'flaky_test_attempts', type: 'string', default: 'default', help: 'Attempts of a failing test; default: 3 for flaky = True tests, else 1.' },
  {
    name: 'test_sharding_strategy',
    type: 'string',
    default: 'explicit',
    allowed: { values: ['explicit', 'disabled'], describe: 'test sharding strategy' },
    help: 'explicit: shard_count shards; disabled: one run.',
  },
  {
    name: 'test_output',
    type: 'string',
    default: 'summary',
    allowed: { values: ['summary', 'errors', 'all', 'streamed'], describe: 'test output mode' },
    help: 'Which test logs to print: summary, errors, all or streamed.',
    executionOnly: true,
  },
  {
    name: 'test_summary',
    type: 'string',
    default: 'short',
    allowed: { values: ['short', 'terse', 'detailed', 'testcase', 'none'], describe: 'test summary format' },
    help: 'The closing summary: short (every test), terse (those that did not pass), detailed (with their test cases), testcase (test case counts only) or none.',
    executionOnly: true,
  },
  {
    name: 'local_test_jobs',
    type: 'int',
    default: 0,
    keywords: { auto: 0 },
    min: 0,
    hostResources: true,
    help: 'Tests run at once on this machine at most (0 or auto: as many as --jobs allows).',
    executionOnly: true,
  },
  {
    name: 'cache_test_results',
    abbrev: 't',
    type: 'string',
    default: 'auto',
    triState: true,
    help: 'auto: reuse passing results of unchanged tests run once; yes: also with --runs_per_test; no: always run.',
    executionOnly: true,
  },
  {
    name: 'test_verbose_timeout_warnings',
    type: 'bool',
    default: false,
    help: 'Name the tests whose timeout is much larger than they need.',
    executionOnly: true,
  },
];
