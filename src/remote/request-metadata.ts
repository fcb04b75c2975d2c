import * as grpc from '@grpc/grpc-js';
import { encodeRequestMetadata } from '../core/index.js';

/** REAPI's header for RequestMetadata (binary, serialized proto). */
export const REQUEST_METADATA_KEY = 'build.bazel.remote.execution.v2.requestmetadata-bin';

/** Who is calling: one build (invocation) of one tool. */
export interface InvocationIdentity {
  readonly toolName: string;
  readonly toolVersion: string;
  /** One per command (`tool_invocation_id`). */
  readonly invocationId: string;
  /** One per build request (`correlated_invocations_id`); Bazel's --build_request_id. */
  readonly buildRequestId: string;
}

/** What the call is for, when it is for one action. */
export interface ActionIdentity {
  /** The action digest's hash, as Bazel sends it. */
  readonly actionId: string;
  readonly mnemonic: string;
  /** The owner label. */
  readonly targetId: string;
  readonly configurationId?: string;
}

/**
 * The metadata of one call: RequestMetadata (tool name and version, invocation and build ids, the
 * action when there is one), then the user's `--remote_header` (and cache/exec variants) values.
 */
export function requestMetadata(who: InvocationIdentity, headers: readonly (readonly [string, string])[], action?: ActionIdentity): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set(
    REQUEST_METADATA_KEY,
    encodeRequestMetadata({
      toolDetails: { toolName: who.toolName, toolVersion: who.toolVersion },
      toolInvocationId: who.invocationId,
      correlatedInvocationsId: who.buildRequestId,
      ...(action
        ? { actionId: action.actionId, actionMnemonic: action.mnemonic, targetId: action.targetId, configurationId: action.configurationId ?? '' }
        : {}),
    }),
  );
  for (const [name, value] of headers) metadata.add(name, value);
  return metadata;
}

/**
 * Parses one `--remote_header=NAME=VALUE`. Names are lower-cased (gRPC metadata keys are); a
 * binary header (`-bin`) is not accepted, as it would need base64.
 * @returns the pair, or an error message naming the flag.
 */
export function parseRemoteHeader(value: string, flag: string): readonly [string, string] | string {
  const eq = value.indexOf('=');
  if (eq <= 0) return `${flag}=${value}: expected NAME=VALUE`;
  const name = value.slice(0, eq).toLowerCase();
  if (!/^[0-9a-z_.-]+$/.test(name)) return `${flag}=${value}: '${name}' is not a valid header name`;
  if (name.endsWith('-bin')) return `${flag}=${value}: binary headers (-bin) are not supported`;
  if (name.startsWith('grpc-')) return `${flag}=${value}: headers starting with grpc- are reserved`;
  return [name, value.slice(eq + 1)];
}
