import { lstat, mkdir, readdir, readlink, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';

/** The directory under the execroot that holds every derived file (`bazel-out/<config>/bin`...), named as Bazel names it. */
export const OUTPUT_DIR_NAME = 'bazel-out';

/** Other repositories' sources are under `external/<name>` in the execroot, as in Bazel. */
const EXTERNAL_DIR_NAME = 'external';

/** `external/<name>` → the repository's directory, for each repository the build read; stale links go. */
async function linkExternalRepositories(execRoot: string, repositories: ReadonlyMap<string, string>): Promise<void> {
  const dir = join(execRoot, EXTERNAL_DIR_NAME);
  const existing = await readdir(dir).catch(() => undefined);
  if (existing === undefined && repositories.size === 0) return;
  await mkdir(dir, { recursive: true });
  for (const name of existing ?? []) {
    const path = join(dir, name);
    const target = repositories.get(name);
    if (target !== undefined && (await readlink(path).catch(() => undefined)) === target) continue;
    await rm(path, { recursive: true, force: true });
  }
  for (const [name, target] of repositories) {
    if ((await readlink(join(dir, name)).catch(() => undefined)) !== target) await symlink(target, join(dir, name));
  }
}

/**
 * Makes `execRoot` the symlink forest Bazel builds: one symlink per top-level entry of the
 * workspace (so `pkg/file` resolves to the source), beside the real `bazel-out` directory that
 * holds derived files, and `external/` with one link per other repository. Entries named `kiln-*` in the workspace (the convenience symlinks) and a
 * workspace entry named `bazel-out` (Bazel's own convenience symlink) are not linked; links to entries that no longer exist are removed; a link pointing elsewhere is replaced.
 * Idempotent, and cheap when nothing changed (one readdir of each side).
 */
export async function prepareExecRoot(workspaceRoot: string, execRoot: string, externalRepositories: ReadonlyMap<string, string> = new Map()): Promise<void> {
  await mkdir(join(execRoot, OUTPUT_DIR_NAME), { recursive: true });
  await linkExternalRepositories(execRoot, externalRepositories);
  const wanted = new Set((await readdir(workspaceRoot)).filter((name) => !name.startsWith('kiln-') && name !== OUTPUT_DIR_NAME && name !== EXTERNAL_DIR_NAME));
  for (const name of await readdir(execRoot)) {
    if (name === OUTPUT_DIR_NAME || name === EXTERNAL_DIR_NAME) continue;
    const path = join(execRoot, name);
    const target = join(workspaceRoot, name);
    const current = await lstat(path);
    if (wanted.has(name) && current.isSymbolicLink() && (await readlink(path)) === target) {
      wanted.delete(name);
      continue;
    }
    await rm(path, { recursive: true, force: true });
  }
  await Promise.all([...wanted].map((name) => symlink(join(workspaceRoot, name), join(execRoot, name))));
}
