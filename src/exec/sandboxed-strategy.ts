import { lstat, mkdir, realpath, rename, rm, symlink } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import type { ProcessResult, ProcessRunner } from '../core/index.js';
import { CAPTURED_OUTPUT_LIMIT_BYTES, inSlot, type Spawn, type SpawnStrategy } from './spawn-strategy.js';

/**
 * Bazel's linux-sandbox, on the namespace sandbox of src/core/sandbox. Each action gets
 * `<scratch>/execroot` holding only symlinks to its declared inputs (pointing at their real paths,
 * whose directories are mounted read-only) and runs there without network: an undeclared input is
 * absent at its exec path, whatever the process writes besides its declared outputs is dropped
 * with the scratch directory, and declared outputs are renamed back to the execroot afterwards.
 */
export class SandboxedStrategy implements SpawnStrategy {
  readonly name = 'sandboxed';
  readonly runnerName = 'linux-sandbox';

  constructor(private readonly runner: ProcessRunner) {}

  async exec(spawn: Spawn): Promise<ProcessResult> {
    const root = join(spawn.scratchDir, 'execroot');
    await mkdir(root, { recursive: true });
    const made = new Set<string>();
    const ensureDir = async (dir: string) => {
      if (made.has(dir)) return;
      await mkdir(dir, { recursive: true });
      made.add(dir);
    };
    const readable = new Set<string>();
    for (const input of spawn.action.inputs) {
      const link = join(root, input.execPath);
      // The real path, so a source reached through the execroot's symlink forest resolves inside.
      const target = await realpath(join(spawn.execRoot, input.execPath));
      readable.add(dirname(target));
      await ensureDir(dirname(link));
      await symlink(target, link).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== 'EEXIST') throw e; // the same input listed twice
      });
    }
    for (const output of spawn.action.outputs) await ensureDir(dirname(join(root, output.execPath)));

    const result = await inSlot(spawn, () =>
      this.runner.run({
        argv: spawn.argv,
        env: spawn.env,
        cwd: root,
        writablePaths: [spawn.scratchDir],
        readOnlyPaths: outermost(readable),
        stdout: { kind: 'buffer', limitBytes: CAPTURED_OUTPUT_LIMIT_BYTES },
        stderr: { kind: 'buffer', limitBytes: CAPTURED_OUTPUT_LIMIT_BYTES },
        signal: spawn.signal,
      }),
    );
    for (const output of spawn.action.outputs) {
      const inside = join(root, output.execPath);
      const present = await lstat(inside).then(() => true, () => false);
      if (!present) continue; // the executor reports it missing
      const target = join(spawn.execRoot, output.execPath);
      await mkdir(dirname(target), { recursive: true });
      await rm(target, { recursive: true, force: true });
      await rename(inside, target);
    }
    return result;
  }
}

/** The directories of `dirs` not inside another one of them: one mount each. */
function outermost(dirs: Set<string>): string[] {
  const sorted = [...dirs].sort();
  const kept: string[] = [];
  for (const dir of sorted) {
    const last = kept[kept.length - 1];
    if (last !== undefined && (dir === last || dir.startsWith(last.endsWith(sep) ? last : last + sep))) continue;
    kept.push(dir);
  }
  return kept;
}
