import { lstat, mkdir, rename, rm, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { runProcess, type ProcessResult } from './run-process.js';
import type { Spawn, SpawnStrategy } from './spawn-strategy.js';

/**
 * Bazel's linux-sandbox, on bubblewrap. Each action gets `<scratch>/execroot` holding only symlinks
 * to its declared inputs, and runs there in fresh user, mount, pid, ipc, uts and network namespaces:
 * the rest of the file system is read-only, the network is only a private loopback (kept for
 * `requires-network`), an undeclared input is not at its relative path, and whatever the process
 * writes besides its declared outputs is dropped with the scratch directory. Declared outputs are
 * moved (renamed, same file system) back to the execroot afterwards.
 */
export class SandboxedStrategy implements SpawnStrategy {
  readonly name = 'sandboxed';
  readonly runnerName = 'linux-sandbox';

  constructor(private readonly bwrap: string) {}

  async exec(spawn: Spawn): Promise<ProcessResult> {
    const root = join(spawn.scratchDir, 'execroot');
    await mkdir(root, { recursive: true });
    const made = new Set<string>();
    const ensureDir = async (dir: string) => {
      if (made.has(dir)) return;
      await mkdir(dir, { recursive: true });
      made.add(dir);
    };
    for (const input of spawn.action.inputs) {
      const link = join(root, input.execPath);
      await ensureDir(dirname(link));
      await symlink(join(spawn.execRoot, input.execPath), link).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== 'EEXIST') throw e; // the same input listed twice
      });
    }
    for (const output of spawn.action.outputs) await ensureDir(dirname(join(root, output.execPath)));

    const network = spawn.action.executionRequirements.includes('requires-network') ? ['--share-net'] : [];
    const argv = [
      this.bwrap,
      '--die-with-parent',
      '--unshare-all',
      ...network,
      '--ro-bind', '/', '/',
      '--dev', '/dev',
      '--proc', '/proc',
      '--bind', spawn.scratchDir, spawn.scratchDir,
      '--chdir', root,
      '--',
      ...spawn.argv,
    ];
    const result = await runProcess({ argv, env: spawn.env, cwd: root });
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
