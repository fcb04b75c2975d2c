import { type longrunning, packAny, reapi } from '../../src/core/index.js';
import type { OperationState } from './execution-scheduler.js';

/**
 * The google.longrunning.Operation clients receive: ExecuteOperationMetadata (stage, action digest)
 * in `metadata`; once done, the ExecuteResponse in `response` (errors too travel in its `status`,
 * as REAPI asks, so clients always find the result and server logs in the same place).
 */
export function operationMessage(op: OperationState): longrunning.OperationInit {
  return {
    name: op.name,
    metadata: packAny(reapi.ExecuteOperationMetadata, {
      stage: op.stage,
      actionDigest: op.actionDigest,
      digestFunction: reapi.DigestFunction_Value.SHA256,
    }),
    done: op.done,
    ...(op.done && op.response ? { response: packAny(reapi.ExecuteResponse, op.response) } : {}),
  };
}
