import type { BlobAccessConfig } from '../src/core/blobstore/index.js';
import type { CacheServerConfig } from './cache-server-config.js';
import { startCacheServer, type CacheServer, type CacheServerOptions } from './cache-server.js';
import type { ServerLog } from './service-context.js';

/** What the execution half adds to the same server (`extraServices`, `executionCapabilities`). */
export interface RunCacheServerOptions extends Omit<CacheServerOptions, 'log'> {
  /** Called once the server listens (tests, and `kiln cluster up` starting executors). */
  readonly started?: (server: CacheServer) => void | Promise<void>;
  /**
   * Called once interrupted, while every service already reports NOT_SERVING and before the port
   * closes: the scheduler lets running actions finish here (`kiln cluster up`, `kiln scheduler`).
   */
  readonly draining?: () => Promise<void>;
}

/** How long a drained server waits for calls still open before cutting them. */
const DRAINED_CLOSE_GRACE_MS = 200;

/**
 * The cache server's main: starts it, announces the endpoint as the first line of `stdout`, logs what
 * it serves, and stops cleanly when `interrupted` resolves.
 */
export async function runCacheServer(
  config: CacheServerConfig,
  out: { stdout(line: string): void; log: ServerLog },
  interrupted: Promise<void>,
  options: RunCacheServerOptions = {},
): Promise<void> {
  const { started, draining, ...serverOptions } = options;
  const server = await startCacheServer(config, { ...serverOptions, log: out.log });
  out.stdout(`${server.endpoint}\n`);
  if (server.metricsUrl) out.stdout(`${server.metricsUrl}\n`);
  out.log.info(`kiln cache server listening on ${server.endpoint}`);
  out.log.info(`services: ${server.services.join(', ')}`);
  if (server.uiUrl) out.log.info(`web UI: ${server.uiUrl} (builds link to it with --bes_results_url=${server.uiUrl}invocation/)`);
  if (server.tokenEndpoint) out.log.info(`service account token endpoint: ${server.tokenEndpoint}`);
  for (const instance of config.instances) {
    const name = instance.name === '' ? '"" (default)' : JSON.stringify(instance.name);
    out.log.info(`instance ${name}: CAS ${describeStorage(instance.cas)}; action cache ${describeStorage(instance.actionCache)}`);
  }
  const l = config.limits;
  out.log.info(
    `limits: batch ${l.maxBatchTotalSizeBytes} bytes, ${l.maxConcurrentRequests} concurrent requests, ${l.maxInFlightBytes} bytes in flight; ` +
      `compressors: zstd; SplitBlob/SpliceBlob: FastCDC 2020, average chunk ${config.chunking.avgChunkSizeBytes} bytes`,
  );
  const be = config.buildEvents;
  if (be) {
    out.log.info(
      `build events: --bes_backend=${server.endpoint}; up to ${be.maxInvocations} invocations, ${be.maxTotalBytes} bytes, ${be.path ? `in ${be.path}` : 'in memory'}`,
    );
  }
  await started?.(server);
  await interrupted;
  out.log.info('interrupted: shutting down');
  // Probes and load balancers see NOT_SERVING while what runs may still finish.
  server.health.drain();
  try {
    await draining?.();
  } finally {
    // After a drain nothing that matters is left: held worker polls and streams already cut. Their
    // clients retry against the next server, whose start must come within their retries (~3 s).
    await server.close(draining ? DRAINED_CLOSE_GRACE_MS : undefined);
  }
}

/** `verifying(disk /path, 64 GiB)`: a config in one line, for the startup log. */
export function describeStorage(config: BlobAccessConfig): string {
  switch (config.kind) {
    case 'memory':
      return `memory (${formatBytes(config.maxBytes)})`;
    case 'disk':
      return `disk ${config.path}/${config.keyspace ?? 'cas'} (${formatBytes(config.maxBytes)})`;
    case 'blocks':
      return `blocks ${config.path}/${config.keyspace ?? 'cas'}-blocks (${formatBytes(config.maxBytes)})`;
    case 'grpc':
      return `grpc ${config.endpoint}${config.keyspace === 'ac' ? ' (action cache)' : ''}`;
    case 'sharding':
      return `sharding(${config.shards.map((s) => `${s.name}×${s.weight ?? 1}: ${describeStorage(s.backend)}`).join(', ')})`;
    case 'mirrored':
      return `mirrored(a: ${describeStorage(config.a)}, b: ${describeStorage(config.b)})`;
    default:
      return `${config.kind}(${describeStorage(config.backend)})`;
  }
}

function formatBytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1 && value % 1024 === 0) {
    value /= 1024;
    unit++;
  }
  return `${value} ${units[unit]}`;
}
