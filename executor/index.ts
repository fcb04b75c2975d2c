// Kiln's executor (worker): the synchronize loop of worker.proto, input materialisation through a
// local file cache, output collection and upload. Other layers (the CLI) import only this file.
export { CasClient } from './cas-client.js';
export { FileCache, type BlobDownloader } from './file-cache.js';
export { materializeInputRoot } from './input-root.js';
export { collectOutputs } from './output-collector.js';
export { BuildExecutor, type BuildExecutorOptions } from './build-executor.js';
export { SynchronizeLoop, type SynchronizeLoopOptions } from './synchronize-loop.js';
export { type ExecutorConfig, DEFAULT_CACHE_BYTES } from './executor-config.js';
export { startExecutor, createRunner, executorIdentity, pingDockerEngine, type RunningExecutor } from './main.js';
export {
  ACTION_LIMIT_PROPERTIES,
  DEFAULT_RESOURCE_LIMITS,
  RESOURCE_LIMIT_KEYS,
  defaultResourceLimitPolicy,
  describeResourceLimitPolicy,
  parseResourceLimitPolicy,
  type ResourceLimitPolicy,
  type ResourceLimits,
} from './runners/resource-limits.js';
export { baseImageTag, defaultImageOf, ensureBaseImage } from './base-image.js';
export {
  EXECUTOR_CONFIG_KEYS,
  type ExecutorConfigKey,
  SCHEDULER_CREDENTIAL_KEYS,
  readClusterExecutorSection,
  readExecutorConfigFile,
  type ClusterExecutorSection,
  type ExecutorConfigFile,
} from './executor-config-file.js';
export { schedulerChannel, readTokenFile, type SchedulerCredentials, type SchedulerChannel } from './scheduler-connection.js';
export { removeDeadWorkDirectories } from './dead-work-directories.js';
export { assignmentFields } from './assignment-fields.js';
export { resolveExecutorConfig, schedulerCredentialsOf, type ExecutorRoleInputs } from './executor-role-config.js';
