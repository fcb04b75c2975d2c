import { existsSync, lstatSync, mkdirSync, readlinkSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { mkdir, symlink } from 'node:fs/promises';
import { basename, dirname, join, posix, sep } from 'node:path';
import type { ProcessResult, ProcessRunner, SandboxTree } from '../core/sandbox/index.js';
import { CAPTURED_OUTPUT_LIMIT_BYTES, inSlot, spawnEnv, SpawnLost, type Spawn, type SpawnStrategy } from './spawn-strategy.js';

/** Host paths every sandboxed action also gets: writable binds and empty tmpfs mounts. */
export interface SandboxPaths {
  readonly writable?: readonly string[];
  readonly tmpfs?: readonly string[];
}

/**
 * Where the action's execroot lies inside its sandbox. Made by the sandbox in its own memory, so
 * it exists in no host directory and no read-only mount of a host directory can cover it.
 */
const SANDBOX_EXECROOT = '/kiln-sandbox/execroot';

/**
 * Bazel's linux-sandbox, on the namespace sandbox of src/core/sandbox. The action runs in an
 * execroot the sandbox builds in its own memory: its declared inputs as symlinks to their real
 * paths (whose directories are mounted read-only) and, mounted over its output directories, empty
 * directories of the host (under the scratch directory) that receive its outputs. It has no
 * network. An undeclared input is absent at its exec path; whatever the process writes besides its
 * declared outputs is dropped with the sandbox or the scratch directory; declared outputs are
 * renamed into the execroot afterwards. Nothing but the output directories is made on the host:
 * each directory made and removed there costs far more than in the sandbox's memory.
 */
export class SandboxedStrategy implements SpawnStrategy {
  readonly name = 'sandboxed';
  readonly runnerName = 'linux-sandbox';

  /** Real paths of the input directories seen in this build (the execroot's forest does not change). */
  private readonly realDirectories = new Map<string, string>();
  /** Output directories made in the execroot during this build: a package's actions share one. */
  private readonly madeDirectories = new Set<string>();

  constructor(
    private readonly runner: ProcessRunner,
    /** `--sandbox_writable_path` (those that exist) and `--sandbox_tmpfs_path`, for every action. */
    private readonly extraPaths: SandboxPaths = {},
  ) {}

  async exec(spawn: Spawn): Promise<ProcessResult> {
    const { action, execRoot } = spawn;
    const readable = new Set<string>();
    const symlinks = uniqueByPath(
      action.inputs.map((input) => {
        // A declared symlink is staged as itself, its target unresolved (it may dangle); a tree
        // artifact as a link to its directory, whose parent is mounted read-only like any input's.
        if (input.kind === 'derived' && input.type === 'symlink') return { execPath: input.execPath, target: readlinkSync(join(execRoot, input.execPath)) };
        const target = this.realPath(join(execRoot, input.execPath));
        readable.add(dirname(target));
        return { execPath: input.execPath, target };
      }),
    );
    const layout = fitsRunner(symlinks, this.runner.treeLimit) ? sandboxTree(spawn, symlinks) : await hostTree(spawn, symlinks);
    const result = await inSlot(
      spawn,
      () =>
        this.runner.run({
          argv: spawn.argv,
          // /tmp is the sandbox's own.
          env: spawnEnv(spawn, '/tmp'),
          cwd: SANDBOX_EXECROOT,
          // A named pipe accepts writes on a read-only mount: the live output pipe needs no writable one.
          readOnlyPaths: [...outermost(readable), ...(spawn.commandScript ? [spawn.commandScript] : []), ...(spawn.liveOutput ? [spawn.liveOutput] : [])],
          tree: layout.tree,
          ...(this.extraPaths.writable?.length ? { writablePaths: this.extraPaths.writable.filter((p) => existsSync(p)) } : {}),
          ...(this.extraPaths.tmpfs?.length ? { tmpfsPaths: this.extraPaths.tmpfs } : {}),
          stdout: { kind: 'buffer', limitBytes: CAPTURED_OUTPUT_LIMIT_BYTES },
          stderr: { kind: 'buffer', limitBytes: CAPTURED_OUTPUT_LIMIT_BYTES },
          signal: spawn.signal,
        }),
      { runnerName: 'linux-sandbox' },
    );
    if (spawn.claim && !spawn.claim()) throw new SpawnLost();
    for (const output of action.outputs) this.moveOut(layout.hostPathOf(output.execPath), join(execRoot, output.execPath));
    return result;
  }

  /**
   * The real path, so that a source reached through the execroot's symlink forest resolves inside
   * the sandbox: its directory's, resolved once per build, unless the file itself is a symlink.
   */
  private realPath(path: string): string {
    if (lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink()) return realpathSync.native(path);
    const dir = dirname(path);
    let real = this.realDirectories.get(dir);
    if (real === undefined) {
      real = realpathSync.native(dir);
      this.realDirectories.set(dir, real);
    }
    return join(real, basename(path));
  }

  /**
   * Moves an output into the execroot, where the executor deleted it before the action ran.
   * Synchronously: a rename through the promise API costs ~55 us of CPU here, the call itself ~20.
   */
  private moveOut(inside: string, target: string): void {
    const dir = dirname(target);
    if (!this.madeDirectories.has(dir)) {
      mkdirSync(dir, { recursive: true });
      this.madeDirectories.add(dir);
    }
    try {
      renameSync(inside, target);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return; // not created: the executor reports it missing
      rmSync(target, { recursive: true, force: true }); // a directory left there by hand
      renameSync(inside, target);
    }
  }
}

/** Whether the runner takes a tree of these inputs (see ProcessRunner.treeLimit); if not, it is built on the host. */
function fitsRunner(inputs: readonly InputLink[], limit: ProcessRunner['treeLimit']): boolean {
  if (!limit) return true;
  if (inputs.length > limit.entries) return false;
  let bytes = 0;
  for (const i of inputs) bytes += SANDBOX_EXECROOT.length + i.execPath.length + i.target.length + 16;
  return bytes < limit.bytes;
}

interface InputLink {
  readonly execPath: string;
  readonly target: string;
}

/** The sandbox's execroot, and where on the host an output written at an exec path ends up. */
interface Layout {
  readonly tree: SandboxTree;
  hostPathOf(execPath: string): string;
}

/**
 * The execroot made in the sandbox's memory; only the outermost output directories are host
 * directories (under the scratch directory) mounted into it.
 */
function sandboxTree(spawn: Spawn, inputs: readonly InputLink[]): Layout {
  const outputDirs = outermost(new Set(spawn.action.outputs.map((o) => posix.dirname(o.execPath))));
  const staged = outputDirs.map((dir, i) => ({ dir, host: join(spawn.scratchDir, `out${i}`) }));
  for (const s of staged) mkdirSync(s.host, { recursive: true }); // may be left empty by the previous action
  const dirs = new Set<string>();
  for (const o of spawn.action.outputs) {
    const dir = posix.dirname(o.execPath);
    if (!outputDirs.includes(dir)) dirs.add(`${SANDBOX_EXECROOT}/${dir}`); // made inside a mount: on the host
    if (o.type === 'directory') dirs.add(`${SANDBOX_EXECROOT}/${o.execPath}`); // a tree artifact's directory exists when the action starts
  }
  return {
    tree: {
      mounts: staged.map((s) => ({ host: s.host, at: `${SANDBOX_EXECROOT}/${s.dir}` })),
      dirs: [...dirs],
      symlinks: inputs.map((i) => ({ path: `${SANDBOX_EXECROOT}/${i.execPath}`, target: i.target })),
    },
    // Inputs that lie in an output directory are linked on the host, and the runner removes those
    // links when the process ends (see SandboxTree): the directory is then empty for the next action.
    hostPathOf,
  };
  function hostPathOf(execPath: string): string {
    const stage = staged.find((s) => execPath.startsWith(`${s.dir}/`))!;
    return join(stage.host, execPath.slice(stage.dir.length + 1));
  }
}

/** The whole execroot made on the host (symlinks and output directories) and mounted as it is. */
async function hostTree(spawn: Spawn, inputs: readonly InputLink[]): Promise<Layout> {
  const root = join(spawn.scratchDir, 'execroot');
  const made = new Set<string>();
  const ensureDir = async (dir: string) => {
    if (made.has(dir)) return;
    await mkdir(dir, { recursive: true });
    made.add(dir);
  };
  for (const input of inputs) {
    const link = join(root, input.execPath);
    await ensureDir(dirname(link));
    await symlink(input.target, link);
  }
  for (const output of spawn.action.outputs) await ensureDir(output.type === 'directory' ? join(root, output.execPath) : dirname(join(root, output.execPath)));
  await ensureDir(root);
  return {
    tree: { mounts: [{ host: root, at: SANDBOX_EXECROOT }], dirs: [], symlinks: [] },
    hostPathOf: (execPath) => join(root, execPath), // the whole tree goes with the scratch directory
  };
}

/** The same input listed twice is one symlink. */
function uniqueByPath<T extends { readonly execPath: string }>(entries: readonly T[]): T[] {
  const seen = new Set<string>();
  return entries.filter((e) => !seen.has(e.execPath) && seen.add(e.execPath));
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
