export {
  executeActions,
  executionPaths,
  type ExecutionOptions,
  type RemoteExecutionOptions,
} from './execute-actions.js';
export type { DownloadMode } from './remote-outputs.js';
export { ActionSpawners, type SandboxRunner } from './action-spawners.js';
export {
  type ExecutionReporter,
  type ExecutionSummary,
  type ClosingOptions,
  type ActionFailure,
  type ActionOutput,
  type ProcessKind,
  type ProcessEnd,
  PROCESS_KIND_ORDER,
  formatProcessSummary,
  formatCompletion,
  formatFailure,
  formatCommand,
  formatSubcommand,
  failedActionsExitCode,
} from './execution-reporter.js';
export { PlainReporter, type TextSink } from './plain-reporter.js';
export { TerminalReporter, type TerminalReporterOptions } from './terminal-reporter.js';
export {
  type StrategyName,
  type StrategyFlags,
  parseStrategyList,
  parseMnemonicStrategy,
  parseDynamicStrategies,
  dynamicBranchStrategies,
  type DynamicBranchFlags,
  mayUseSandbox,
  chooseStrategy,
} from './strategy-selection.js';
export { actionEnvironment, buildActionEnvironment, DEFAULT_ACTION_PATH } from './action-environment.js';
export { FileDigestCache } from './file-digest-cache.js';
export type { CheckedFile } from './checked-files.js';
export { LocalActionCache } from './local-action-cache.js';
export { MAX_COMMAND_LINE_BYTES } from './command-script.js';
export { prepareExecRoot, OUTPUT_DIR_NAME } from './exec-root.js';
