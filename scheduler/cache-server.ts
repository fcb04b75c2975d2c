import type * as grpc from '@grpc/grpc-js';
import { reapi } from '../src/core/index.js';
import type { BlobAccessLogger } from '../src/core/blobstore/index.js';
import {
  HEALTH_SERVICE_NAME,
  HealthStatus,
  healthService,
  healthServiceDefinition,
  openHealthPort,
  ServingStatus,
  type HealthPort,
} from '../src/core/health/index.js';
import { BlobAccessMetrics } from '../src/core/blobstore/index.js';
import { newMetricsRegistry, openMetricsPort, type MetricsPort, type Registry } from '../src/core/metrics/index.js';
import { actionCacheService } from './action-cache-service.js';
import { openBuildEventServer, type BuildEventQueries } from './build-events/index.js';
import { byteStreamDefinition, byteStreamService } from './byte-stream-service.js';
import type { CacheServerConfig } from './cache-server-config.js';
import { capabilitiesService, type ExecutionCapabilitiesSource } from './capabilities-service.js';
import { contentAddressableStorageService } from './content-addressable-storage-service.js';
import { grpcMetricsInterceptor } from './grpc-metrics.js';
import { grpcServerOptions, startGrpcServer, type ServiceRegistration } from './grpc-server.js';
import { ConcurrencyLimit } from './concurrency-limit.js';
import { InFlightLimiter } from './in-flight-limiter.js';
import type { ExecutionScheduler } from './execution/index.js';
import { openPortSecurity, type PortSecurity } from './security/port-security.js';
import { webUi } from './ui/index.js';
import type { ServerLog, ServiceContext } from './service-context.js';
import { StorageInstances } from './storage-instances.js';
import { UploadSessions } from './upload-sessions.js';

export interface CacheServer {
  /** `grpc://host:port` (`grpcs://` with TLS), what clients pass to --remote_cache. */
  readonly endpoint: string;
  readonly port: number;
  /** Reload hooks of the TLS and token files (which are watched as well). */
  readonly security: Pick<PortSecurity, 'reloadTls' | 'reloadTokens'>;
  readonly context: ServiceContext;
  /** Proto names of the services on the port. */
  readonly services: readonly string[];
  /** gRPC health of the port (grpc.health.v1.Health on it): SERVING once listening, NOT_SERVING from `close` on. */
  readonly health: HealthStatus;
  /** The plaintext port that serves only the health service (config `healthPort`), for Kubernetes' probes. */
  readonly healthPort?: number;
  /** The service accounts' token endpoint (`token_uri` of their key files), when configured. */
  readonly tokenEndpoint?: string;
  /** The invocations the Build Event Service keeps (config `buildEvents`); absent when it is not served. */
  readonly buildEvents?: BuildEventQueries;
  /** The registry the server's metrics go to (blob stores, gRPC calls, and whatever `extraServices` add). */
  readonly metrics: Registry;
  /** `http://HOST:PORT/metrics` when config `metricsPort` is set. */
  readonly metricsUrl?: string;
  /** `http://HOST:PORT/`, the web UI on the same HTTP port as the metrics. */
  readonly uiUrl?: string;
  /** Stops serving and discards unfinished uploads. */
  /**
   * Stops the port, waiting up to `graceMs` (2 s by default) for calls under way before cutting them,
   * and closes the stores.
   */
  close(graceMs?: number): Promise<void>;
}

export interface CacheServerOptions {
  readonly log: ServerLog;
  /** More services for the same port (the execution half of the cluster). */
  readonly extraServices?: (ctx: ServiceContext) => readonly ServiceRegistration[];
  /** Execution capabilities to advertise next to the cache's. */
  readonly executionCapabilities?: ExecutionCapabilitiesSource;
  /** With auth on: a token of the server's own executors (`kiln cluster up`), with the worker role everywhere. */
  readonly clusterExecutorToken?: string;
  /** The registry for the server's metrics (shared with the execution half and in-process executors); a new one by default. */
  readonly metrics?: Registry;
  /** The execution half's state machine, whose queue, executors and recent operations the web UI shows. */
  readonly scheduler?: ExecutionScheduler;
}

/** Blob operations of batch RPCs running at once, server-wide: well below the usual 1024 open files. */
const STORAGE_OPS = 64;

/** Opens the storage of every instance and the services that serve it. */
export async function createCacheContext(config: CacheServerConfig, log: ServerLog, metrics?: Registry): Promise<ServiceContext> {
  const logger: BlobAccessLogger = { warn: (m) => log.warn(m) };
  const instances = await StorageInstances.open(config.instances, logger, metrics ? BlobAccessMetrics.of(metrics) : undefined, config.limits.pinTtlMs);
  return { instances, config, log, limiter: new InFlightLimiter(config.limits), storageOps: new ConcurrencyLimit(STORAGE_OPS) };
}

/** The cache's services, one registration per concern. */
export function cacheServices(ctx: ServiceContext, sessions: UploadSessions, executionCapabilities?: ExecutionCapabilitiesSource): ServiceRegistration[] {
  const registration = (name: string, definition: object, implementation: grpc.UntypedServiceImplementation): ServiceRegistration => ({
    name,
    definition: definition as grpc.ServiceDefinition,
    implementation,
  });
  return [
    registration('build.bazel.remote.execution.v2.Capabilities', reapi.CapabilitiesService, capabilitiesService(ctx, executionCapabilities)),
    registration('build.bazel.remote.execution.v2.ContentAddressableStorage', reapi.ContentAddressableStorageService, contentAddressableStorageService(ctx)),
    registration('build.bazel.remote.execution.v2.ActionCache', reapi.ActionCacheService, actionCacheService(ctx)),
    registration('google.bytestream.ByteStream', byteStreamDefinition, byteStreamService(ctx, sessions)),
  ];
}

/** Starts the REAPI cache server: Capabilities, CAS, ActionCache and ByteStream on one port. */
export async function startCacheServer(config: CacheServerConfig, options: CacheServerOptions): Promise<CacheServer> {
  // Process metrics (CPU, memory, event loop) only where someone can scrape them.
  const metrics = options.metrics ?? newMetricsRegistry({ processMetrics: config.metricsPort !== undefined });
  const ctx = await createCacheContext(config, options.log, metrics);
  const sessions = new UploadSessions(config.limits.uploadIdleTimeoutMs);
  const health = new HealthStatus();
  const buildEvents = config.buildEvents ? await openBuildEventServer(config.buildEvents, ctx).catch(closing(ctx)) : undefined;
  const served = [
    ...cacheServices(ctx, sessions, options.executionCapabilities),
    ...(buildEvents ? [buildEvents.registration] : []),
    ...(options.extraServices?.(ctx) ?? []),
  ];
  const services = [...served, { name: HEALTH_SERVICE_NAME, definition: healthServiceDefinition, implementation: healthService(health) }];
  let server;
  let security: PortSecurity | undefined;
  let healthPort: HealthPort | undefined;
  let metricsPort: MetricsPort | undefined;
  try {
    security = await openPortSecurity(config.security, options.log, options.clusterExecutorToken);
    const interceptors = [grpcMetricsInterceptor(metrics), ...security.interceptors];
    const serverOptions = { ...grpcServerOptions(config.limits.maxBatchTotalSizeBytes), interceptors };
    server = await startGrpcServer(config.host, config.port, services, serverOptions, security.credentials);
    if (config.healthPort !== undefined) healthPort = await openHealthPort(config.host, config.healthPort, health);
    if (config.metricsPort !== undefined) {
      const scheme = security.scheme;
      const shownHost = config.host.includes(':') ? `[${config.host}]` : config.host;
      const pages = webUi(
        {
          server: ctx,
          endpoint: `${scheme}://${shownHost}:${server.port}`,
          ...(buildEvents ? { buildEvents: buildEvents.queries } : {}),
          ...(options.scheduler ? { scheduler: options.scheduler } : {}),
        },
        security.auth ? { auth: security.auth } : {},
      );
      metricsPort = await openMetricsPort(config.host, config.metricsPort, metrics, pages);
    }
  } catch (e) {
    await server?.stop(0);
    await healthPort?.close();
    security?.close();
    await buildEvents?.close();
    await sessions.closeAll();
    ctx.instances.close();
    throw e;
  }
  // The stores are open and the port listens: every service, and the server as a whole, is serving.
  for (const name of ['', ...services.map((s) => s.name)]) health.set(name, ServingStatus.SERVING);
  const secured = security;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const running = server;
  return {
    endpoint: `${secured.scheme}://${host}:${running.port}`,
    port: running.port,
    security: secured,
    context: ctx,
    services: services.map((s) => s.name),
    health,
    ...(healthPort ? { healthPort: healthPort.port } : {}),
    ...(secured.tokenEndpoint ? { tokenEndpoint: secured.tokenEndpoint.url } : {}),
    ...(buildEvents ? { buildEvents: buildEvents.queries } : {}),
    metrics,
    ...(metricsPort ? { metricsUrl: metricsPort.url, uiUrl: metricsPort.url.replace(/metrics$/, '') } : {}),
    close: async (graceMs?: number) => {
      // Probes see NOT_SERVING (and watches end) before the port stops taking calls.
      health.shutdown();
      await running.stop(graceMs);
      await healthPort?.close();
      await metricsPort?.close();
      secured.close();
      await buildEvents?.close();
      await sessions.closeAll();
      ctx.instances.close();
    },
  };
}

/** Closes the stores of `ctx`, then rethrows: for a failure after they opened. */
function closing(ctx: ServiceContext): (e: unknown) => never {
  return (e) => {
    ctx.instances.close();
    throw e;
  };
}
