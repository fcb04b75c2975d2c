import type { PropertyMatch } from './platform-rules.js';

/** The knobs of the execution scheduler; every time is in milliseconds. */
export interface SchedulerConfig {
  /** Executors must call Synchronize at least this often. */
  readonly heartbeatIntervalMs: number;
  /** Extra time before a silent executor counts as vanished. */
  readonly heartbeatGraceMs: number;
  /** How long an idle executor's Synchronize is held waiting for work (below the heartbeat interval). */
  readonly maxSynchronizeWaitMs: number;
  /** Times an action is queued again after its executor vanished before it fails with UNAVAILABLE. */
  readonly maxRetries: number;
  /** How long an action waits while no executor could ever run it before it fails (FAILED_PRECONDITION). */
  readonly noExecutorWaitMs: number;
  /** How long an operation whose every client left is kept before it is cancelled (room to reconnect). */
  readonly abandonedOperationGraceMs: number;
  /** How long finished operations stay visible to WaitExecution / GetOperation. */
  readonly completedOperationRetentionMs: number;
  /** Action.timeout when unset. */
  readonly defaultTimeoutMs: number;
  /** Largest Action.timeout accepted. */
  readonly maxTimeoutMs: number;
  /** Beyond an action's timeout, how long the scheduler waits for the executor's own report before failing it. */
  readonly executionGraceMs: number;
  /** Matching rule per platform property name; others match exactly. */
  readonly platformRules: Readonly<Record<string, PropertyMatch>>;
}

export const DEFAULT_SCHEDULER_CONFIG: SchedulerConfig = {
  heartbeatIntervalMs: 10_000,
  heartbeatGraceMs: 5_000,
  maxSynchronizeWaitMs: 5_000,
  maxRetries: 2,
  noExecutorWaitMs: 30_000,
  abandonedOperationGraceMs: 10_000,
  completedOperationRetentionMs: 10 * 60_000,
  defaultTimeoutMs: 15 * 60_000,
  maxTimeoutMs: 60 * 60_000,
  executionGraceMs: 30_000,
  platformRules: {},
};
