// The build's own records: the Build Event Protocol, the JSON trace profile, the execution log.
export { BuildRecords, openBuildRecords, type RecordsRequest, type RecordedAnalysis, type RecordedExecution } from './build-records.js';
export { builtTargetsOf, testRunsOf } from './recorded-execution.js';
export { optionWords, type RecordedCommandLine } from './invocation.js';
export type { BuildEventTransport } from './build-event-stream.js';
export type { RecordedConfiguration } from './build-event-recorder.js';
