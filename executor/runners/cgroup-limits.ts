import { availableParallelism } from 'node:os';
import { ActionCgroups, type CgroupPaths } from './action-cgroups.js';
import { defaultResourceLimitPolicy, limitsForAction, type ResourceLimitPolicy } from './resource-limits.js';
import type { PlatformProperty } from './runner.js';

/**
 * The local runner's resource limits: each run gets a cgroup of its own (ActionCgroups) with the
 * limits of its action, which the run's process joins before it runs anything (ProcessSpec.cgroups,
 * honoured by every process runner of src/core/sandbox).
 */
export class CgroupLimits {
  private constructor(
    private readonly policy: ResourceLimitPolicy,
    private readonly cgroups: ActionCgroups,
  ) {}

  /** The limits, or undefined when `policy` is null or this machine gives us no cgroups (said through `log`). */
  static open(policy: ResourceLimitPolicy | null | undefined, log: (message: string) => void, paths?: CgroupPaths): CgroupLimits | undefined {
    if (policy === null) return undefined;
    const cgroups = ActionCgroups.open(paths);
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
   * Runs `run` with a new cgroup with the limits of an action of this platform (InvalidArgumentError
   * for a limit property it may not have): `run` gets its cgroup.procs files, which the run's
   * processes join before they start (ProcessSpec.cgroups). `outOfMemory` is set when the kernel
   * killed one of its processes for memory. The cgroup, and anything left in it, is gone afterwards.
   */
  async within<T extends { readonly outOfMemory: boolean }>(
    platform: readonly PlatformProperty[],
    run: (cgroups: readonly string[]) => Promise<T>,
  ): Promise<T> {
    const cgroup = this.cgroups.make(limitsForAction(this.policy, platform));
    try {
      const result = await run(cgroup.procsFiles);
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
