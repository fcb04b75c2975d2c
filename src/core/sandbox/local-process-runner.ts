import type { ProcessResult, ProcessRunner, ProcessSpec } from './process-runner.js';
import { spawnProcessGroup } from './spawn-process-group.js';

/** Runs the process directly on the host: Bazel's `local` (standalone) strategy. No confinement. */
export class LocalProcessRunner implements ProcessRunner {
  readonly name = 'local';

  run(spec: ProcessSpec): Promise<ProcessResult> {
    return spawnProcessGroup(spec);
  }
}
