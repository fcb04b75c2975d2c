// The build tool (Bazel's lib/buildtool): a request in; loading, analysis, execution and test runs
// here; results and events out as data, for the command line to print.
export { runBuild, type BuildRequest, type BuildResult } from './build-tool.js';
export { warningText, type BuildEvent, type BuildEventSink, type BuildUi, type ClosingReport, type TestRunFinished } from './events.js';
export type { BuildGraph, BuiltTarget } from './build-graph.js';
export { BuildGraphCache, BUILD_GRAPH_VERSION, type BuildGraphKey } from './build-graph-cache.js';
export { NullBuildRecords, nullBuildKey, filesUnchanged, type NullBuildRecord } from './null-build-record.js';
export { targetOutputDirectories } from './analysis-phase.js';
export * from './workspace/index.js';
export type { TestOutcome } from './test-outcome.js';
export { readTestCases, type TestCase, type TestCases } from './test-cases.js';
export { testOutcomes, retryFailedRuns, withInheritedEnv, clearAttemptLogs } from './test-phase.js';
export { TestRunReporter, type TestOutputMode, type TestRunListener } from './test-run-reporter.js';
export { readRunResult, type RunResult } from './test-results.js';
export { completeTimedOutRun } from './timed-out-run.js';
// cquery and aquery: the configured graph of a universe, queried; the results formatted as Bazel prints them.
export {
  configuredTargetsFor,
  type ConfiguredQueryRequest,
  type ConfiguredQueryAnswer,
  type ConfiguredQueryOutcome,
} from './configured-query.js';
export {
  parseConfiguredQueryCommandLine,
  configuredQueryOptionDefinitions,
  type ConfiguredQueryCommand,
  type ConfiguredQueryOptions,
  type ConfiguredQueryCommandLine,
} from './configured-query-options.js';
export type { ConfiguredNode, ConfiguredEdge } from './configured-graph.js';
export { formatCqueryResult, configuredLabel } from './configured-query-output.js';
export { formatAqueryResult, analysisActionKey, actionGraphContainer, shellEscape } from './action-graph-output.js';
// The build's own records: Build Event Protocol files, the JSON trace profile, the execution log.
export { optionWords, type RecordedCommandLine } from './records/index.js';
