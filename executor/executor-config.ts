import type { BlobAccessConfig } from '../src/core/blobstore/index.js';
import type { ResourceLimitPolicy } from './runners/resource-limits.js';
import type { PlatformProperty } from './runners/runner.js';
import type { SchedulerCredentials } from './scheduler-connection.js';

/** Everything `kiln executor` (and `kiln cluster up`) configures about one executor. */
export interface ExecutorConfig {
  /** `grpcs://host:port` (TLS), `grpc://host:port` or `host:port` (plain): the scheduler. */
  readonly scheduler: string;
  /** TLS files and token to connect with (a secured scheduler refuses an executor without the worker role). */
  readonly credentials?: SchedulerCredentials;
  readonly instanceName: string;
  /** Shown in logs and in ExecutedActionMetadata.worker. */
  readonly name: string;
  /** Actions run at once. */
  readonly slots: number;
  readonly runner: 'docker' | 'local';
  /** Holds the file cache and the build directories (one file system, for hard links). */
  readonly workDirectory: string;
  /** Memory, pids and CPU limits of each action; default defaultResourceLimitPolicy. */
  readonly limits?: ResourceLimitPolicy;
  /** Bound of the file cache. */
  readonly cacheBytes: number;
  /** Announced to the scheduler; OSFamily=linux is added when absent. */
  readonly platform: readonly PlatformProperty[];
  /** Docker engine address for the docker runner; $DOCKER_HOST or the default socket when absent. */
  readonly dockerHost?: string;
  /**
   * The docker runner's image for actions without a `container-image` property; KILN_BASE_IMAGE when
   * absent (the CLI passes the base image of this checkout's recipe, see ensureBaseImage, or --image).
   */
  readonly defaultImage?: string;
  /**
   * A plaintext port serving grpc.health.v1.Health, for Kubernetes' grpc probe: the
   * executor has no port of its own. SERVING while it takes work; 0 picks a free one; none when absent.
   */
  readonly healthPort?: number;
  /** On SIGTERM/SIGINT, how long running actions may finish (taking no new work) before they are aborted; 0: abort at once. */
  readonly drainTimeoutMs?: number;
  /** Where inputs are read and outputs written, instead of through the scheduler's CAS (its file's `storage`). */
  readonly storage?: BlobAccessConfig;
  /** Where the health port listens: every interface by default (the kubelet probes the pod's address). */
  readonly healthHost?: string;
  /** A plaintext HTTP port serving Prometheus metrics at /metrics (on healthHost's interfaces); 0 picks a free one; none when absent. */
  readonly metricsPort?: number;
}

export const DEFAULT_CACHE_BYTES = 8 * 1024 * 1024 * 1024;
