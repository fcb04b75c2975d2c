import type * as grpc from '@grpc/grpc-js';
import { reapi } from '../src/core/index.js';

export const REQUEST_METADATA_KEY = 'build.bazel.remote.execution.v2.requestmetadata-bin';

/** RequestMetadata's tool_invocation_id from the call's headers ('' when absent or unreadable). */
export function invocationIdOf(metadata: grpc.Metadata | undefined): string {
  const raw = metadata?.get(REQUEST_METADATA_KEY)[0];
  if (!Buffer.isBuffer(raw)) return '';
  try {
    return reapi.RequestMetadata.decode(raw).toolInvocationId;
  } catch {
    return '';
  }
}
