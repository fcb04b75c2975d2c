import { lstat, mkdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { isProcessAlive, nodeCrypto } from '../../core/index.js';
import { CONVENIENCE_SYMLINKS } from '../../loading/index.js';

/** Where one workspace's build state lives, outside the source tree. */
export interface OutputLayout {
  readonly workspaceRoot: string;
  readonly outputBase: string;
  /** Actions run here: the symlink forest of the workspace plus the real `bazel-out/`. */
  readonly execRoot: string;
}

/**
 * `~/.cache/kiln/<md5 of the workspace path>` unless `--output_base` names another directory
 * (relative to the working directory). HOME and XDG_CACHE_HOME come from the command's env, so a
 * test never touches the real cache.
 */
export function outputLayout(
  workspaceRoot: string,
  workspaceName: string,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
  outputBaseFlag: string | undefined,
): OutputLayout {
  let outputBase: string;
  if (outputBaseFlag !== undefined) outputBase = resolve(cwd, outputBaseFlag);
  else {
    const cacheHome = env.XDG_CACHE_HOME || join(env.HOME || '/tmp', '.cache');
    outputBase = join(cacheHome, 'kiln', nodeCrypto().createHash('md5').update(workspaceRoot).digest('hex'));
  }
  // Bazel names the execroot after the main repository; `__main__` when it has no name.
  return { workspaceRoot, outputBase, execRoot: join(outputBase, 'execroot', workspaceName || '__main__') };
}

/** Kiln's `--symlink_prefix`; `/` makes none (as Bazel's). */
export const DEFAULT_SYMLINK_PREFIX = 'kiln-';

/** How the convenience symlinks are named: `--symlink_prefix` and `--[no]incompatible_skip_genfiles_symlink`. */
export interface ConvenienceSymlinkOptions {
  readonly prefix: string;
  /** `--noincompatible_skip_genfiles_symlink`: also `<prefix>genfiles` (present-day Bazel makes none by default). */
  readonly genfiles?: boolean;
}

/**
 * Points `<prefix>bin` & co. (`kiln-bin` by default; `bazel-bin` with `--symlink_prefix=bazel-`) at
 * the target configuration's directories, and `<prefix><workspace directory's name>` at the execroot,
 * as Bazel does; replaces stale links, and removes a `<prefix>genfiles` link that is no longer made.
 * `/` makes none.
 */
export async function updateConvenienceSymlinks(
  layout: OutputLayout,
  dirs: { readonly bin: string; readonly genfiles: string; readonly testlogs: string; readonly outputRoot: string },
  options: ConvenienceSymlinkOptions = { prefix: DEFAULT_SYMLINK_PREFIX },
): Promise<void> {
  const { prefix } = options;
  if (prefix === '/') return;
  const wanted: Record<string, string | undefined> = {
    bin: join(layout.execRoot, dirs.bin),
    genfiles: options.genfiles ? join(layout.execRoot, dirs.genfiles) : undefined,
    out: join(layout.execRoot, dirs.outputRoot),
    testlogs: join(layout.execRoot, dirs.testlogs),
    [basename(layout.workspaceRoot)]: layout.execRoot,
  };
  for (const [name, target] of Object.entries(wanted)) {
    const link = join(layout.workspaceRoot, `${prefix}${name}`);
    const current = await lstat(link).catch(() => undefined);
    if (current) {
      // Never delete a real file or directory the user put there under one of our names.
      if (!current.isSymbolicLink()) continue;
      if (target !== undefined && (await readlink(link)) === target) continue;
      await rm(link, { force: true });
    }
    if (target === undefined) continue;
    await mkdir(dirname(link), { recursive: true });
    await symlink(target, link);
  }
}

/** Removes the convenience symlinks of `prefix` (only symlinks: a real file of that name is the user's). */
export async function removeConvenienceSymlinks(workspaceRoot: string, prefix = DEFAULT_SYMLINK_PREFIX): Promise<void> {
  if (prefix === '/') return;
  for (const name of [...CONVENIENCE_SYMLINKS, basename(workspaceRoot)]) {
    const link = join(workspaceRoot, `${prefix}${name}`);
    const current = await lstat(link).catch(() => undefined);
    if (current?.isSymbolicLink()) await rm(link, { force: true });
  }
}

/**
 * One command per output base at a time (execution's caches assume it). The lock file holds the
 * owner's pid; a lock left by a process that no longer exists is taken over. Resolves to the
 * release function, or undefined when `signal` aborts the wait.
 */
export async function lockOutputBase(outputBase: string, onWait: (pid: number) => void, signal?: AbortSignal): Promise<(() => Promise<void>) | undefined> {
  await mkdir(outputBase, { recursive: true });
  const path = join(outputBase, 'lock');
  let announced = false;
  while (!signal?.aborted) {
    try {
      await writeFile(path, String(process.pid), { flag: 'wx' });
      return () => rm(path, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const owner = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
    if (!Number.isFinite(owner) || !isProcessAlive(owner)) {
      await rm(path, { force: true });
      continue;
    }
    if (!announced) {
      onWait(owner);
      announced = true;
    }
    // Another process owns it; there is no event to await across processes, so poll.
    await abortableDelay(200, signal);
  }
  return undefined;
}

function abortableDelay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
