// The Execution API, the Operations API and the worker protocol of Kiln's scheduler.
export { DEFAULT_SCHEDULER_CONFIG, parseSchedulerConfig, type SchedulerConfig } from './scheduler-config.js';
export { PlatformRules, type PropertyMatch, type PlatformProperty } from './platform-rules.js';
export { ExecutionQueue } from './execution-queue.js';
export { validateAction, type ValidatedAction, type ActionLimits } from './action-validator.js';
export {
  ExecutionScheduler,
  type OperationState,
  type OperationListener,
  type SubmitRequest,
  type SynchronizeOutcome,
  type ExecutionSnapshot,
  type ExecutorDetails,
} from './execution-scheduler.js';
export { operationMessage } from './operation-message.js';
export { OperationHistory, operationMetadataOf, NO_METADATA, type OperationMetadata, type RecordedOperation } from './operation-history.js';
export { executionService } from './execution-service.js';
export { REQUEST_METADATA_KEY, invocationIdOf } from '../request-metadata.js';
export { operationsService } from './operations-service.js';
export { workerService } from './worker-service.js';
export { createExecutionServer, type ExecutionServer, type ExecutionServerOptions } from './execution-server.js';
