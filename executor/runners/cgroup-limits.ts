import { AsyncLocalStorage } from 'node:async_hooks';
import { availableParallelism } from 'node:os';
import { spawnProcessGroup, type ProcessGroupSpawner } from '../../src/core/index.js';
import { ActionCgroups, type ActionCgroup } from './action-cgroups.js';
import { defaultResourceLimitPolicy, limitsForAction, type ResourceLimitPolicy } from './resource-limits.js';
import type { PlatformProperty } from './runner.js';

/**
 * The local runner's resource limits: each run gets a cgroup of its own (ActionCgroups) with the
 * limits of its action, and every process a run starts through `spawner` joins that cgroup before
 * it runs anything. The run's cgroup travels to the spawner through an AsyncLocalStorage, so one
 * process runner serves every action.
 */
export class CgroupLimits {
  private readonly current = new AsyncLocalStorage<ActionCgroup>();

  private constructor(
    private readonly policy: ResourceLimitPolicy,
    private readonly cgroups: ActionCgroups,
  ) {}

  /** The limits, or undefined when `policy` is null or this machine gives us no cgroups (said through `log`). */
  static open(policy: ResourceLimitPolicy | null | undefined, log: (message: string) => void): CgroupLimits | undefined {
    if (policy === null) return undefined;
    const cgroups = ActionCgroups.open();
    if (!(cgroups instanceof ActionCgroups)) {
      log(`local runner: actions run without memory, pids or CPU limits: ${cgroups.reason} (the docker runner has them)`);
      return undefined;
    }
    return new CgroupLimits(policy ?? defaultResourceLimitPolicy(availableParallelism()), cgroups);
  }

  get version(): 1 | 2 {
    return this.cgroups.version;
  }

  /**
   * Starts each process through a shell on the host that first moves itself into the run's cgroup,
   * so the command and everything it forks are limited from their first instruction (a pid written
   * after the start would let early children escape). The shell adds PWD to the environment; `env`
   * puts back exactly the command's. Outside a run, processes start as they are.
   */
  spawner(spawn: ProcessGroupSpawner = spawnProcessGroup): ProcessGroupSpawner {
    const script = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';
    return (spec) => {
      const cgroup = this.current.getStore();
      if (!cgroup) return spawn(spec);
      const program = spec.argv[0] ?? '';
      if (program.includes('=')) return Promise.reject(new TypeError(`cannot run a program whose name contains '=' under cgroup limits: '${program}'`));
      const pwd = spec.env.PWD === undefined ? ['-u', 'PWD'] : [`PWD=${spec.env.PWD}`];
      return spawn({ ...spec, argv: ['/bin/sh', '-c', script, 'kiln-cgroup', ...cgroup.procsFiles, '--', '/usr/bin/env', ...pwd, ...spec.argv] });
    };
  }

  /**
   * Runs `run` in a new cgroup with the limits of an action of this platform (InvalidArgumentError
   * for a limit property it may not have); `outOfMemory` is set when the kernel killed one of its
   * processes for memory. The cgroup, and anything left in it, is gone afterwards.
   */
  async within<T extends { readonly outOfMemory: boolean }>(platform: readonly PlatformProperty[], run: () => Promise<T>): Promise<T> {
    const cgroup = this.cgroups.make(limitsForAction(this.policy, platform));
    try {
      const result = await this.current.run(cgroup, run);
      return cgroup.outOfMemory() ? { ...result, outOfMemory: true } : result;
    } finally {
      await cgroup.remove();
    }
  }

  /** Removes the runner's cgroups (no run is left). */
  close(): void {
    this.cgroups.close();
  }
}
