import { reapi } from '../src/core/index.js';
import type { ServiceContext } from './service-context.js';
import { unaryHandler } from './service-context.js';

/**
 * The newest REAPI version whose every cache-side feature this server serves: v2.12 added SplitBlob /
 * SpliceBlob with FastCDC, which this server implements. Execution capabilities are left out until
 * the execution half of the cluster runs on the same port.
 */
export const LOW_API_VERSION = { major: 2, minor: 0, patch: 0 };
export const HIGH_API_VERSION = { major: 2, minor: 12, patch: 0 };

/** build.bazel.remote.execution.v2.Capabilities: what each instance supports. */
/**
 * What the execution half adds for an instance it serves (the execution half registers it on the same port);
 * absent while the server is a cache only.
 */
export type ExecutionCapabilitiesSource = (instanceName: string) => reapi.ExecutionCapabilitiesInit | undefined;

export function capabilitiesService(ctx: ServiceContext, execution?: ExecutionCapabilitiesSource): reapi.CapabilitiesServer {
  return {
    GetCapabilities: unaryHandler(
      ctx,
      'GetCapabilities',
      () => 0,
      async (request) => {
        ctx.instances.get(request.instanceName);
        const executionCapabilities = execution?.(request.instanceName);
        return { ...cacheServerCapabilities(ctx), ...(executionCapabilities ? { executionCapabilities } : {}) };
      },
    ),
  };
}

function cacheServerCapabilities(ctx: ServiceContext): reapi.ServerCapabilitiesInit {
  const { limits, chunking } = ctx.config;
  return {
    cacheCapabilities: {
      digestFunctions: [reapi.DigestFunction_Value.SHA256],
      actionCacheUpdateCapabilities: { updateEnabled: true },
      cachePriorityCapabilities: { priorities: [{ minPriority: 0, maxPriority: 0 }] },
      maxBatchTotalSizeBytes: limits.maxBatchTotalSizeBytes,
      maxCasBlobSizeBytes: limits.maxCasBlobSizeBytes,
      symlinkAbsolutePathStrategy: reapi.SymlinkAbsolutePathStrategy_Value.ALLOWED,
      supportedCompressors: [reapi.Compressor_Value.ZSTD],
      supportedBatchUpdateCompressors: [reapi.Compressor_Value.ZSTD],
      splitBlobSupport: true,
      spliceBlobSupport: true,
      fastCdc2020Params: { avgChunkSizeBytes: chunking.avgChunkSizeBytes, seed: chunking.seed },
    },
    lowApiVersion: LOW_API_VERSION,
    highApiVersion: HIGH_API_VERSION,
  };
}
