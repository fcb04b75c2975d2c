import { googleRpc, type reapi } from '../../src/core/index.js';
import type { ServerLog } from '../../src/core/log/index.js';
import type { SchedulerObserver } from './execution-scheduler.js';
import { operationFields } from './execution-service.js';

/** The scheduler's log lines about operations: where each one ran and how it ended, with its operation, action and invocation. */
export function schedulerLogObserver(log: ServerLog): SchedulerObserver {
  return {
    taskAssigned: (op, executorName) => log.info(`assigned to executor ${executorName}`, operationFields(op)),
    operationFinished: (response, op) => log.info(`operation finished: ${describeResponse(response)}`, operationFields(op)),
  };
}

/** Every hook of each observer, called in order. */
export function combinedObserver(...observers: SchedulerObserver[]): SchedulerObserver {
  return {
    operationFinished: (response, op) => {
      for (const o of observers) o.operationFinished?.(response, op);
    },
    taskAssigned: (op, executorName) => {
      for (const o of observers) o.taskAssigned?.(op, executorName);
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
