import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { NativeSpawner, nativeSpawnerBinary, type NativeSpawnerOptions } from './native-spawner.js';
import type { ProcessResult, ProcessRunner, ProcessSpec } from './process-runner.js';
import { makeSandboxDirectory } from './sandbox-directory.js';
import { prepareSandboxEtc, sandboxSteps } from './sandbox-plan.js';

/**
 * Bazel's linux-sandbox natively: each process runs in a sandbox that kiln-spawn builds itself
 * (native/sandbox.c) from sandboxSteps, the same layout bwrap gets, at ~1/5 of bwrap's cost per
 * process. Its sandboxes share one user, network (loopback only) and ipc namespace, made once
 * by the helper; mount, pid, uts and cgroup namespaces are each sandbox's own. The environment
 * is exactly the spec's (no PWD is added), and killing the process group also kills the sandbox's
 * pid 1, which takes every process inside with it.
 */
export class NativeSandboxRunner implements ProcessRunner {
  readonly name = 'linux-sandbox';

  private constructor(
    private readonly spawner: NativeSpawner,
    private readonly directory: string,
    private readonly etcDirectory: string,
  ) {}

  /**
   * Starts the helper and its namespaces (a private directory under the system's temporary one
   * holds the sandbox's /etc and the helper's mount point): the runner, or why this machine
   * cannot run it (no compiled helper, a kernel that refuses a step, or a `user` it cannot switch
   * to). `user`: the host user the commands run as (a root caller only); `networkPerRun`: a network
   * namespace per sandbox, so concurrent sandboxes cannot reach each other over loopback.
   */
  static async start(options: Pick<NativeSpawnerOptions, 'sandboxUser' | 'networkPerRun'> = {}): Promise<NativeSandboxRunner | { readonly reason: string }> {
    const binary = nativeSpawnerBinary();
    if (!binary) return { reason: 'the native sandbox was not compiled (no C compiler at `npm run build`)' };
    let directory: string;
    try {
      directory = makeSandboxDirectory('kiln-sandbox');
      mkdirSync(join(directory, 'base'));
    } catch (e) {
      return { reason: `the native sandbox has no directory to work in: ${(e as Error).message}` };
    }
    const base = join(directory, 'base');
    const spawner = new NativeSpawner(binary, { ...options, sandboxBase: base });
    if (await spawner.started()) return new NativeSandboxRunner(spawner, directory, prepareSandboxEtc(join(directory, 'etc')));
    await spawner.close();
    rmSync(directory, { recursive: true, force: true });
    return { reason: `the native sandbox cannot run here: ${spawner.startFailure ?? 'its helper did not start'}` };
  }

  run(spec: ProcessSpec): Promise<ProcessResult> {
    return this.spawner.run({ ...spec, sandbox: sandboxSteps(spec, this.etcDirectory) });
  }

  /** Ends the helper (what still runs is killed) and removes its directory. */
  async close(): Promise<void> {
    await this.spawner.close();
    rmSync(this.directory, { recursive: true, force: true });
  }
}
