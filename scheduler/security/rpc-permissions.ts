import { instanceOfOperationName } from '../execution/operation-name.js';
import { parseReadResourceName, parseWriteResourceName } from '../resource-name.js';
import type { Role } from './security-config.js';

/** What an RPC does, as far as authorisation goes. */
export type Permission = 'read' | 'write-cas' | 'write-action-cache' | 'execute' | 'work' | 'administer' | 'publish-build-events';

/**
 * Each role's permissions. An executor client uploads inputs and runs actions, but its results reach
 * the action cache only through the cluster's own executors: writing the action cache directly
 * (UpdateActionResult) is `cache-writer`'s alone, so a developer's machine cannot poison it.
 * Publishing build events (Bazel's `--bes_backend`) stores what the client sent, so it needs a role
 * that writes: `cache-writer` (CI) and `executor-client` (developers who build on the cluster), not
 * `cache-reader` (read-only) nor `worker` (executors run actions, not builds). Reading invocations is
 * `read` on their instance, as reading the cache is.
 */
export const ROLE_PERMISSIONS: Readonly<Record<Role, readonly Permission[]>> = {
  'cache-reader': ['read'],
  'cache-writer': ['read', 'write-cas', 'write-action-cache', 'publish-build-events'],
  'executor-client': ['read', 'write-cas', 'execute', 'publish-build-events'],
  worker: ['read', 'write-cas', 'work'],
  admin: ['read', 'write-cas', 'write-action-cache', 'execute', 'work', 'administer', 'publish-build-events'],
};

/** An RPC's permission and the instance its request names (undefined: the name says none that could exist). */
interface RpcRule {
  readonly permission: Permission;
  readonly instanceOf: (request: Record<string, unknown>) => string | undefined;
}

const byInstanceName = (request: Record<string, unknown>) => (typeof request['instanceName'] === 'string' ? request['instanceName'] : undefined);
/** The Build Event Service names the instance in `project_id` (Bazel's `--bes_instance_name`). */
const byProjectId = (request: Record<string, unknown>) => (typeof request['projectId'] === 'string' ? request['projectId'] : undefined);
const byOperationName = (request: Record<string, unknown>) => (typeof request['name'] === 'string' ? instanceOfOperationName(request['name']) : undefined);
/** Resource names go through the ByteStream service's own parser; one it refuses names no instance. */
const byResourceName = (parse: (name: string) => { instanceName: string }) => (request: Record<string, unknown>) => {
  try {
    return parse(String(request['resourceName'] ?? '')).instanceName;
  } catch {
    return undefined;
  }
};

const REAPI = 'build.bazel.remote.execution.v2';
const rule = (permission: Permission, instanceOf: RpcRule['instanceOf']): RpcRule => ({ permission, instanceOf });

/** Every RPC of the cluster's port, by gRPC path. A method not listed needs `admin`. */
const RULES: ReadonlyMap<string, RpcRule> = new Map([
  [`/${REAPI}.Capabilities/GetCapabilities`, rule('read', byInstanceName)],
  [`/${REAPI}.ContentAddressableStorage/FindMissingBlobs`, rule('read', byInstanceName)],
  [`/${REAPI}.ContentAddressableStorage/BatchReadBlobs`, rule('read', byInstanceName)],
  [`/${REAPI}.ContentAddressableStorage/GetTree`, rule('read', byInstanceName)],
  // Splitting stores only chunks of a blob already there: a way of reading it.
  [`/${REAPI}.ContentAddressableStorage/SplitBlob`, rule('read', byInstanceName)],
  [`/${REAPI}.ContentAddressableStorage/BatchUpdateBlobs`, rule('write-cas', byInstanceName)],
  [`/${REAPI}.ContentAddressableStorage/SpliceBlob`, rule('write-cas', byInstanceName)],
  [`/${REAPI}.ActionCache/GetActionResult`, rule('read', byInstanceName)],
  [`/${REAPI}.ActionCache/UpdateActionResult`, rule('write-action-cache', byInstanceName)],
  ['/google.bytestream.ByteStream/Read', rule('read', byResourceName(parseReadResourceName))],
  ['/google.bytestream.ByteStream/Write', rule('write-cas', byResourceName(parseWriteResourceName))],
  ['/google.bytestream.ByteStream/QueryWriteStatus', rule('write-cas', byResourceName(parseWriteResourceName))],
  [`/${REAPI}.Execution/Execute`, rule('execute', byInstanceName)],
  [`/${REAPI}.Execution/WaitExecution`, rule('execute', byOperationName)],
  ['/google.longrunning.Operations/GetOperation', rule('execute', byOperationName)],
  ['/google.longrunning.Operations/WaitOperation', rule('execute', byOperationName)],
  ['/google.longrunning.Operations/CancelOperation', rule('execute', byOperationName)],
  ['/google.longrunning.Operations/DeleteOperation', rule('execute', byOperationName)],
  // Lists the operations of every instance.
  ['/google.longrunning.Operations/ListOperations', rule('administer', () => undefined)],
  ['/kiln.worker.v1.WorkerService/Synchronize', rule('work', byInstanceName)],
  // A stream's later requests must name the instance its first did (build-event-service.ts).
  ['/google.devtools.build.v1.PublishBuildEvent/PublishLifecycleEvent', rule('publish-build-events', byProjectId)],
  ['/google.devtools.build.v1.PublishBuildEvent/PublishBuildToolEventStream', rule('publish-build-events', byProjectId)],
]);

const UNLISTED: RpcRule = rule('administer', () => undefined);

/**
 * Calls anyone may make, with or without credentials: what they answer is the same for every caller
 * and says nothing of what the server stores. gRPC health checking, because load balancers and the
 * kubelet ask without tokens; GetCapabilities, because Bazel 2.1.0 sends no `--remote_header` with
 * it (it would fail before its first real call).
 */
const PUBLIC_SERVICES = ['/grpc.health.v1.Health/'];
const PUBLIC_METHODS = new Set([`/${REAPI}.Capabilities/GetCapabilities`]);

export function isPublicRpc(path: string): boolean {
  return PUBLIC_METHODS.has(path) || PUBLIC_SERVICES.some((prefix) => path.startsWith(prefix));
}

/** What calling `path` with `request` needs. */
export function requiredPermission(path: string, request: unknown): { permission: Permission; instance: string | undefined } {
  const r = RULES.get(path) ?? UNLISTED;
  const fields = typeof request === 'object' && request !== null ? (request as Record<string, unknown>) : {};
  return { permission: r.permission, instance: r.instanceOf(fields) };
}
