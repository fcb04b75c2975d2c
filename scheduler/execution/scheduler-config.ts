import { resolve } from 'node:path';
import { fieldPath, readNonEmptyString, readNonNegativeInteger, readObject, readOneOf, type ConfigFail } from '../../src/core/index.js';
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
  /**
   * Execute / WaitExecution streams send intermediate stages (QUEUED, EXECUTING) at most this long
   * after they change, coalesced; the final Operation always goes at once. REAPI lets servers skip
   * stages: an action that finishes within this time costs one message instead of four, a slow one
   * still shows its stages. 0 sends every change at once.
   */
  readonly stageUpdateDelayMs: number;
  /** Most actions queued per platform; Execute beyond it is RESOURCE_EXHAUSTED with RetryInfo. 0: no bound. */
  readonly maxQueuedActionsPerPlatform: number;
  /** The RetryInfo delay sent with a full queue's RESOURCE_EXHAUSTED. */
  readonly queueFullRetryAfterMs: number;
  /** Operations the web UI keeps for its pages of recent operations (oldest dropped first); 0 keeps none. */
  readonly recentOperations: number;
  /** Matching rule per platform property name; others match exactly. */
  readonly platformRules: Readonly<Record<string, PropertyMatch>>;
  /**
   * On SIGTERM, how long actions already running may take to finish (their results still reach the
   * clients) before the scheduler stops; what is left is resumed by the next scheduler. 0: stop at once.
   */
  readonly drainTimeoutMs: number;
  /**
   * Where operations are journaled (operation-journal.ts), so that a restarted scheduler answers
   * WaitExecution for them: finished ones with their result, unfinished ones by running them again
   * (or by taking the report of the executor that still runs them). Absent: operations live in memory.
   */
  readonly operationsFile?: string;
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
  stageUpdateDelayMs: 100,
  maxQueuedActionsPerPlatform: 0,
  queueFullRetryAfterMs: 1000,
  recentOperations: 1000,
  platformRules: {},
  drainTimeoutMs: 0,
};

const DURATION_KEYS = [
  'heartbeatIntervalMs',
  'heartbeatGraceMs',
  'maxSynchronizeWaitMs',
  'noExecutorWaitMs',
  'abandonedOperationGraceMs',
  'completedOperationRetentionMs',
  'defaultTimeoutMs',
  'maxTimeoutMs',
  'executionGraceMs',
  'stageUpdateDelayMs',
  'queueFullRetryAfterMs',
  'drainTimeoutMs',
] as const;

const COUNT_KEYS = ['maxRetries', 'maxQueuedActionsPerPlatform', 'recentOperations'] as const;

/**
 * The `execution` section of the server's JSON config: any SchedulerConfig field (times in ms,
 * `maxRetries`, `platformRules` as {"name": "exact" | "minimum" | "ignore"}, `operationsFile` relative
 * to `baseDir`; with `--storage DIR` it defaults to DIR/operations.jsonl). Problems are reported
 * through `fail` with the field's path.
 */
export function parseSchedulerConfig(value: unknown, fail: ConfigFail, baseDir = process.cwd(), storageDir?: string): SchedulerConfig {
  const defaults: SchedulerConfig =
    storageDir === undefined ? DEFAULT_SCHEDULER_CONFIG : { ...DEFAULT_SCHEDULER_CONFIG, operationsFile: resolve(storageDir, 'operations.jsonl') };
  if (value === undefined) return defaults;
  const obj = readObject(value, 'execution', [...DURATION_KEYS, ...COUNT_KEYS, 'platformRules', 'operationsFile'], fail);
  const out: { -readonly [K in keyof SchedulerConfig]: SchedulerConfig[K] } = { ...defaults };
  for (const [key, v] of Object.entries(obj)) {
    const field = fieldPath('execution', key);
    if (key === 'operationsFile') {
      out.operationsFile = resolve(baseDir, readNonEmptyString(v, field, fail));
    } else if (key === 'platformRules') {
      const rules = readObject(v, field, undefined, fail);
      for (const [name, rule] of Object.entries(rules)) readOneOf(rule, fieldPath(field, name), ['exact', 'minimum', 'ignore'] as const, fail);
      out.platformRules = rules as Record<string, PropertyMatch>;
    } else {
      out[key as (typeof DURATION_KEYS)[number] | (typeof COUNT_KEYS)[number]] = readNonNegativeInteger(v, field, fail);
    }
  }
  if (out.maxSynchronizeWaitMs >= out.heartbeatIntervalMs) fail('execution.maxSynchronizeWaitMs', 'must be below heartbeatIntervalMs');
  if (out.defaultTimeoutMs > out.maxTimeoutMs) fail('execution.defaultTimeoutMs', 'must not exceed maxTimeoutMs');
  return out;
}
