import { googleRpc, type reapi } from '../../src/core/index.js';
import type { ServerLog } from '../../src/core/log/index.js';
import type { SchedulerObserver } from './execution-scheduler.js';
import { operationFields } from './execution-service.js';

/** The scheduler's log lines about operations: where each one ran and how it ended, with its operation, action and invocation. */
export function schedulerLogObserver(log: ServerLog): SchedulerObserver {
  return {
    taskAssigned: (ops, executor) => {
      for (const op of ops) log.info(`assigned to executor ${executor.name}`, operationFields(op));
    },
    operationFinished: (response, op) => log.info(`operation finished: ${describeResponse(response)}`, operationFields(op)),
  };
}

/** Every hook of each observer, called in order. */
export function combinedObserver(...observers: SchedulerObserver[]): SchedulerObserver {
  return {
    operationFinished: (response, op) => {
      for (const o of observers) o.operationFinished?.(response, op);
    },
    operationQueued: (op, request) => {
      for (const o of observers) o.operationQueued?.(op, request);
    },
    taskAssigned: (ops, executor, taskId) => {
      for (const o of observers) o.taskAssigned?.(ops, executor, taskId);
    },
    operationForgotten: (name) => {
      for (const o of observers) o.operationForgotten?.(name);
    },
    executionAssigned: (platformKey, queuedMs) => {
      for (const o of observers) o.executionAssigned?.(platformKey, queuedMs);
    },
    executionReported: (response) => {
      for (const o of observers) o.executionReported?.(response);
    },
  };
}

/** `cache hit, exit code 0`, `exit code 1`, `DEADLINE_EXCEEDED: …`. */
function describeResponse(response: reapi.ExecuteResponseInit): string {
  const code = response.status?.code ?? googleRpc.Code.OK;
  if (code !== googleRpc.Code.OK) return `${googleRpc.Code[code] ?? code}: ${response.status?.message ?? ''}`;
  const exit = `exit code ${response.result?.exitCode ?? 0}`;
  return response.cachedResult ? `cache hit, ${exit}` : exit;
}
