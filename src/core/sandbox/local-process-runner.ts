import { joiningCgroups } from './join-cgroups.js';
import type { ProcessResult, ProcessRunner, ProcessSpec } from './process-runner.js';
import { spawnProcessGroup } from './spawn-process-group.js';
import type { ProcessGroupSpawner } from './spawn-server.js';

/** Runs the process directly on the host: Bazel's `local` (standalone) strategy. No confinement. */
export class LocalProcessRunner implements ProcessRunner {
  readonly name = 'local';

  /** `spawn`: in-process by default, or a SpawnServer's `run`. */
  constructor(private readonly spawn: ProcessGroupSpawner = spawnProcessGroup) {}

  run(spec: ProcessSpec): Promise<ProcessResult> {
    if (spec.tree) return Promise.reject(new TypeError('a process on the host cannot have a sandbox tree'));
    try {
      return this.spawn(joiningCgroups(spec, spec.cgroups));
    } catch (e) {
      return Promise.reject(e);
    }
  }
}
