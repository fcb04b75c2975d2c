import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { runProcess, type ProcessResult } from './run-process.js';
import type { Spawn, SpawnStrategy } from './spawn-strategy.js';

/** Bazel's standalone strategy: the process runs in the execroot itself and sees all of it. */
export class LocalStrategy implements SpawnStrategy {
  readonly name = 'local';
  readonly runnerName = 'local';

  async exec(spawn: Spawn): Promise<ProcessResult> {
    await Promise.all(spawn.action.outputs.map((o) => mkdir(dirname(join(spawn.execRoot, o.execPath)), { recursive: true })));
    return runProcess({ argv: spawn.argv, env: spawn.env, cwd: spawn.execRoot });
  }
}
