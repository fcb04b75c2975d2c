import type { kilnWorker } from '../src/core/index.js';
import type { LogFields } from '../src/core/log/index.js';

/** The operation, action and invocation an assignment serves: the fields of its log lines. */
export function assignmentFields(a: kilnWorker.Assignment): LogFields {
  return {
    operation: a.operationName,
    ...(a.actionDigest ? { actionDigest: `${a.actionDigest.hash}/${a.actionDigest.sizeBytes}` } : {}),
    invocationId: a.toolInvocationId,
  };
}
