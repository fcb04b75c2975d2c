import { mkdir, readdir, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { HealthStatus, openHealthPort, ServingStatus } from '../src/core/health/index.js';
import type { kilnWorker } from '../src/core/index.js';
import { newMetricsRegistry, openMetricsPort, type Registry } from '../src/core/metrics/index.js';
import { BuildExecutor } from './build-executor.js';
import { CasClient, type ExecutorCas } from './cas-client.js';
import { StorageCas } from './storage-cas.js';
import type { ExecutorConfig } from './executor-config.js';
import { measuredExecutor } from './executor-metrics.js';
import { FileCache } from './file-cache.js';
import { DockerRunner } from './runners/docker-runner.js';
import { LocalRunner } from './runners/local-runner.js';
import type { Runner } from './runners/runner.js';
import { schedulerChannel } from './scheduler-connection.js';
import { SynchronizeLoop } from './synchronize-loop.js';

export interface RunningExecutor {
  readonly name: string;
  readonly runner: string;
  /** How the runner enforces the resource limits, or false when it cannot here. */
  readonly limits: string | false;
  /** Resolves with the reason when the scheduler refuses this executor's credentials (it then takes no work). */
  readonly refused: Promise<string>;
  /** The health port's number (config `healthPort`), when it has one. */
  readonly healthPort?: number;
  /** `http://HOST:PORT/metrics` (config `metricsPort`), when it has one. */
  readonly metricsUrl?: string;
  /**
   * Takes no more work (the health port says NOT_SERVING) and resolves once the running actions
   * have finished and been reported. Call `stop` after it, or instead of it to abort them.
   */
  drain(): Promise<void>;
  /** Stops taking work, kills running actions, closes connections. */
  stop(): Promise<void>;
}

/**
 * The runner of the config. Docker: the engine must answer first (UnavailableError saying how to
 * start one otherwise); containers a killed run of this executor left are removed. Local: says
 * through `log` when it cannot enforce the limits.
 */
export async function createRunner(
  config: Pick<ExecutorConfig, 'runner' | 'dockerHost' | 'defaultImage' | 'limits' | 'workDirectory'> & { readonly slots?: number },
  log: (message: string) => void,
): Promise<Runner> {
  if (config.runner === 'docker') {
    const docker = new DockerRunner({
      ...(config.dockerHost ? { dockerHost: config.dockerHost } : {}),
      ...(config.defaultImage ? { defaultImage: config.defaultImage } : {}),
      ...(config.limits ? { limits: config.limits } : {}),
      owner: executorIdentity(config.workDirectory),
      // A started container kept per slot: a full executor keeps all of them warm.
      ...(config.slots ? { warm: { maxIdle: config.slots } } : {}),
    });
    await docker.ping();
    const removed = await docker.removeLeftovers();
    if (removed > 0) log(`removed ${removed} container(s) left by an executor that was killed`);
    return docker;
  }
  return LocalRunner.create({ log, ...(config.limits ? { limits: config.limits } : {}) });
}

/** Fails with UnavailableError, saying how to start one, when no Docker engine answers there. */
export async function pingDockerEngine(dockerHost: string | undefined): Promise<void> {
  await new DockerRunner(dockerHost ? { dockerHost } : {}).ping();
}

/**
 * Who owns an executor's containers: the same across its restarts (its work directory, which no
 * other executor of the host may share), different from any other executor on the same engine.
 */
export function executorIdentity(workDirectory: string): string {
  return `${hostname()}:${resolve(workDirectory)}`;
}

/** Build directories and spill files a killed run left behind: the build root is this executor's alone. */
async function removeStaleBuildDirectories(buildRoot: string, log: (message: string) => void): Promise<void> {
  const entries = await readdir(buildRoot);
  if (entries.length === 0) return;
  await Promise.all(entries.map((entry) => rm(join(buildRoot, entry), { recursive: true, force: true })));
  log(`removed ${entries.length} build directory(ies) and file(s) left in ${buildRoot} by an executor that was killed`);
}

/**
 * The executor's main: wires CAS client, file cache, runner and the synchronize loop, and starts it.
 * `started` hears of each action as it starts (`kiln executor` logs it).
 */
export async function startExecutor(
  config: ExecutorConfig,
  log: (message: string) => void,
  runner?: Runner,
  started?: (assignment: kilnWorker.Assignment) => void,
  /** The registry for this executor's metrics (`kiln cluster up`: the server's); its own when absent. */
  metrics?: Registry,
): Promise<RunningExecutor> {
  const registry = metrics ?? newMetricsRegistry({ processMetrics: config.metricsPort !== undefined });
  // First, so a port already taken fails before anything is started. Serving from the moment the
  // loop runs; not once the scheduler refused this executor (it takes no work then).
  const health = new HealthStatus();
  const healthPort = config.healthPort === undefined ? undefined : await openHealthPort(config.healthHost ?? '0.0.0.0', config.healthPort, health);
  let metricsPort;
  try {
    metricsPort = config.metricsPort === undefined ? undefined : await openMetricsPort(config.healthHost ?? '0.0.0.0', config.metricsPort, registry);
  } catch (e) {
    await healthPort?.close();
    throw e;
  }
  const channel = schedulerChannel(config.scheduler, config.credentials);
  const chosen = runner ?? (await createRunner(config, log));
  const buildRoot = join(config.workDirectory, 'build');
  await mkdir(buildRoot, { recursive: true });
  await removeStaleBuildDirectories(buildRoot, log);
  const cas: ExecutorCas = config.storage
    ? await StorageCas.open(config.storage)
    : new CasClient({ scheduler: config.scheduler, instanceName: config.instanceName, credentials: config.credentials, workerName: config.name });
  const fileCache = await FileCache.open(join(config.workDirectory, 'cache'), config.cacheBytes, (d, p) => cas.download(d, p));
  const executor = new BuildExecutor({ cas, fileCache, runner: chosen, buildRoot, workerName: config.name });
  const platform = config.platform.some((p) => p.name === 'OSFamily') ? config.platform : [{ name: 'OSFamily', value: 'linux' }, ...config.platform];
  let refuse: (message: string) => void = () => undefined;
  const refused = new Promise<string>((resolve) => (refuse = resolve));
  const loop = new SynchronizeLoop({
    channel,
    instanceName: config.instanceName,
    displayName: config.name,
    platform,
    slots: config.slots,
    executor: measuredExecutor(executor, registry, config.name),
    log,
    refused: refuse,
    ...(started ? { started } : {}),
  });
  loop.start();
  health.set('', ServingStatus.SERVING);
  void refused.then(() => health.set('', ServingStatus.NOT_SERVING));
  return {
    name: config.name,
    runner: chosen.name,
    limits: chosen.enforcesLimits ?? false,
    refused,
    ...(healthPort ? { healthPort: healthPort.port } : {}),
    ...(metricsPort ? { metricsUrl: metricsPort.url } : {}),
    drain: () => {
      health.set('', ServingStatus.NOT_SERVING);
      return loop.drain();
    },
    stop: async () => {
      health.shutdown();
      await healthPort?.close();
      await metricsPort?.close();
      // Running actions are aborted: their processes or containers are killed and removed, and
      // their build directories too, before the runner's close removes anything still left.
      await loop.stop();
      await executor.close();
      cas.close();
      // A runner passed in belongs to the caller.
      if (!runner) await chosen.close?.();
      await removeStaleBuildDirectories(buildRoot, () => undefined);
    },
  };
}
