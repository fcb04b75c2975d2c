// The REAPI server of Kiln's cluster. Other layers (the CLI) import only this file.
export {
  type CacheServerConfig,
  type CacheServerLimits,
  type InstanceStorageConfig,
  type ConfigOverrides,
  CACHE_SERVER_SECTIONS,
  DEFAULT_LIMITS,
  parseCacheServerConfig,
  instanceStorageFor,
} from './cache-server-config.js';
export { parseStorageNodeConfig } from './storage-node-config.js';
export { parseSchedulerRoleConfig, parseStorageRoleConfig, type SchedulerRoleConfig, type StorageRoleConfig } from './cluster-config.js';
export { startCacheServer, createCacheContext, cacheServices, type CacheServer, type CacheServerOptions } from './cache-server.js';
export { runCacheServer, describeStorage, type RunCacheServerOptions } from './main.js';
export type { ServerLog, ServiceContext } from './service-context.js';
export type { ServiceRegistration } from './grpc-server.js';
export { HIGH_API_VERSION, LOW_API_VERSION, type ExecutionCapabilitiesSource } from './capabilities-service.js';
export { FastCdc2020Chunker, type FastCdc2020Options } from './fast-cdc-2020.js';
export { RESERVED_INSTANCE_SEGMENTS, instanceNameProblem } from './instance-name.js';
export { newToken } from './security/token-file.js';
export { newServiceAccount } from './security/service-account-tokens.js';
export { ROLES, type Role, type SecurityConfig, type AuthConfig, type ServerTlsConfig } from './security/security-config.js';
export { parseReadResourceName, parseWriteResourceName } from './resource-name.js';
export {
  createExecutionServer,
  DEFAULT_SCHEDULER_CONFIG,
  parseSchedulerConfig,
  ExecutionScheduler,
  PlatformRules,
  type ExecutionServer,
  type ExecutionServerOptions,
  type SchedulerConfig,
  type PropertyMatch,
} from './execution/index.js';
export {
  BuildEventQueries,
  EVERYONE,
  invocationViewer,
  type BuildEventsConfig,
  type InvocationDetails,
  type InvocationFilter,
  type InvocationStatus,
  type InvocationSummary,
  type InvocationTarget,
  type InvocationViewer,
} from './build-events/index.js';
