import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { BuildExecutor } from './build-executor.js';
import { CasClient } from './cas-client.js';
import type { ExecutorConfig } from './executor-config.js';
import { FileCache } from './file-cache.js';
import { DockerRunner } from './runners/docker-runner.js';
import { LocalRunner } from './runners/local-runner.js';
import type { Runner } from './runners/runner.js';
import { SynchronizeLoop } from './synchronize-loop.js';

export interface RunningExecutor {
  readonly name: string;
  readonly runner: string;
  /** Stops taking work, kills running actions, closes connections. */
  stop(): Promise<void>;
}

/**
 * The runner of the config. Docker: the engine must answer first (UnavailableError saying how to
 * start one otherwise).
 */
export async function createRunner(kind: ExecutorConfig['runner'], log: (message: string) => void, dockerHost?: string): Promise<Runner> {
  if (kind === 'docker') {
    const docker = new DockerRunner(dockerHost ? { dockerHost } : {});
    await docker.ping();
    return docker;
  }
  return LocalRunner.create({ log });
}

/** The executor's main: wires CAS client, file cache, runner and the synchronize loop, and starts it. */
export async function startExecutor(config: ExecutorConfig, log: (message: string) => void, runner?: Runner): Promise<RunningExecutor> {
  const address = config.scheduler.replace(/^grpc:\/\//, '');
  const chosen = runner ?? (await createRunner(config.runner, log, config.dockerHost));
  const buildRoot = join(config.workDirectory, 'build');
  await mkdir(buildRoot, { recursive: true });
  const cas = new CasClient(address, config.instanceName);
  const fileCache = await FileCache.open(join(config.workDirectory, 'cache'), config.cacheBytes, (d, p) => cas.download(d, p));
  const executor = new BuildExecutor({ cas, fileCache, runner: chosen, buildRoot, workerName: config.name });
  const platform = config.platform.some((p) => p.name === 'OSFamily') ? config.platform : [{ name: 'OSFamily', value: 'linux' }, ...config.platform];
  const loop = new SynchronizeLoop({ address, instanceName: config.instanceName, displayName: config.name, platform, slots: config.slots, executor, log });
  loop.start();
  return {
    name: config.name,
    runner: chosen.name,
    stop: async () => {
      await loop.stop();
      executor.close();
      cas.close();
      // A runner passed in belongs to the caller.
      if (!runner) await chosen.close?.();
    },
  };
}
