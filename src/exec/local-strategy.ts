import { mkdirSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ProcessResult, ProcessRunner } from '../core/sandbox/index.js';
import { CAPTURED_OUTPUT_LIMIT_BYTES, inSlot, spawnEnv, type Spawn, type SpawnStrategy } from './spawn-strategy.js';

/** Bazel's standalone strategy: the process runs in the execroot itself and sees all of it. */
export class LocalStrategy implements SpawnStrategy {
  readonly name = 'local';
  readonly runnerName = 'local';

  /** Output directories made during this build: a package's actions share one. */
  private readonly madeDirs = new Set<string>();

  /** `runner`: a LocalProcessRunner, normally on a build's spawn server (see ActionSpawners). */
  constructor(private readonly runner: ProcessRunner) {}

  async exec(spawn: Spawn): Promise<ProcessResult> {
    for (const o of spawn.action.outputs) {
      const dir = dirname(join(spawn.execRoot, o.execPath));
      if (!this.madeDirs.has(dir)) {
        await mkdir(dir, { recursive: true });
        this.madeDirs.add(dir);
      }
      // As Bazel, a tree artifact's directory exists (empty) when its action starts.
      if (o.type === 'directory') await mkdir(join(spawn.execRoot, o.execPath), { recursive: true });
    }
    const tmpDir = join(spawn.scratchDir, 'tmp');
    mkdirSync(tmpDir, { recursive: true }); // left empty by the scratch directory's previous action
    const run = () =>
      this.runner.run({
        argv: spawn.argv,
        env: spawnEnv(spawn, tmpDir),
        cwd: spawn.execRoot,
        stdout: { kind: 'buffer', limitBytes: CAPTURED_OUTPUT_LIMIT_BYTES },
        stderr: { kind: 'buffer', limitBytes: CAPTURED_OUTPUT_LIMIT_BYTES },
        signal: spawn.signal,
      });
    return inSlot(spawn, run, { runnerName: 'local' });
  }
}
