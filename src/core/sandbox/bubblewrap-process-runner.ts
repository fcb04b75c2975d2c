import { copyFileSync, existsSync, lstatSync, mkdirSync, readlinkSync, symlinkSync } from 'node:fs';
import { basename, isAbsolute, join } from 'node:path';
import type { ProcessResult, ProcessRunner, ProcessSpec, SandboxTree } from './process-runner.js';
import { spawnProcessGroup } from './spawn-process-group.js';
import type { ProcessGroupSpawner } from './spawn-server.js';

/** Read-only system directories: enough for bash, coreutils and dynamically linked tools. */
const SYSTEM_DIRECTORIES = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** The few files of /etc that programs need to start and to name users; nothing else of /etc. */
const ETC_FILES = [
  '/etc/passwd',
  '/etc/group',
  '/etc/nsswitch.conf',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/localtime',
  '/etc/alternatives',
];

/** Those of ETC_FILES that are directories: mounted whole over the prepared /etc's empty ones. */
const ETC_DIRECTORIES = ETC_FILES.filter((path) => lstatSync(path, { throwIfNoEntry: false })?.isDirectory());

export interface BubblewrapProcessRunnerOptions {
  /** Path of the bwrap executable (see detectSandboxSupport). */
  readonly bwrapPath: string;
  /**
   * The user and group the process runs as inside the sandbox (default: Kiln's own). Its files
   * still belong to Kiln's user outside; this only keeps a root Kiln from running actions as root.
   */
  readonly uid?: number;
  readonly gid?: number;
  /** Starts bwrap: in-process by default, or a SpawnServer's `run`. */
  readonly spawn?: ProcessGroupSpawner;
  /**
   * `spawn` starts bwrap from inside a network namespace of its own with no network (a SpawnServer
   * under isolatedNetworkWrapper): the sandbox keeps that namespace instead of making one per
   * process. Creating and tearing down a network namespace is half of bwrap's cost here.
   */
  readonly inIsolatedNetwork?: boolean;
  /**
   * A directory made by prepareSandboxEtc, mounted as the sandbox's /etc: one mount where binding
   * the files one by one costs a mount each (~1 ms per action for the seven of them here).
   */
  readonly etcDirectory?: string;
}

/**
 * Copies the /etc files the sandbox shows into `dir`, for `etcDirectory` (a symlink stays a symlink;
 * a directory, /etc/alternatives and its hundreds of links, is left as an empty mount point that
 * bubblewrapArguments mounts over). A copy taken once per build: an /etc changed meanwhile shows
 * from the next build.
 */
export function prepareSandboxEtc(dir: string): string {
  mkdirSync(dir, { recursive: true });
  for (const file of ETC_FILES) {
    const st = lstatSync(file, { throwIfNoEntry: false });
    const copy = join(dir, basename(file));
    if (st?.isSymbolicLink()) symlinkSync(readlinkSync(file), copy);
    else if (st?.isDirectory()) mkdirSync(copy);
    else if (st?.isFile()) copyFileSync(file, copy);
  }
  return dir;
}

/**
 * Runs a command (a spawn server) in a new network namespace with no network, otherwise seeing the
 * host as it is. Sandboxes started from it share that empty namespace: no network at all, as with
 * one namespace each, though concurrent sandboxes could reach each other's abstract Unix sockets.
 */
export function isolatedNetworkWrapper(bwrapPath: string): string[] {
  return [bwrapPath, '--unshare-net', '--die-with-parent', '--dev-bind', '/', '/', '--'];
}

/**
 * Runs the process inside bubblewrap: new user, mount, pid, network, ipc, uts and cgroup
 * namespaces, so it sees no network at all (not even a working loopback), only the system
 * directories read-only, the declared read-only paths, and its working directory (plus any
 * declared writable paths) writable at their host paths; /tmp is private and /dev minimal.
 * Everything else, including writes anywhere else, stays inside the sandbox's throwaway root.
 * Killing bwrap kills the sandbox's pid 1 (--die-with-parent) and with it every process inside.
 */
export class BubblewrapProcessRunner implements ProcessRunner {
  readonly name = 'linux-sandbox';

  constructor(private readonly options: BubblewrapProcessRunnerOptions) {}

  async run(spec: ProcessSpec): Promise<ProcessResult> {
    const spawn = this.options.spawn ?? spawnProcessGroup;
    return spawn({
      ...spec,
      // bwrap itself starts on the host; a tree's working directory exists only inside.
      cwd: spec.tree ? '/' : spec.cwd,
      argv: [
        this.options.bwrapPath,
        ...identity(this.options),
        ...bubblewrapArguments(spec, this.options.inIsolatedNetwork ?? false, this.options.etcDirectory),
        '--',
        ...exactPwd(spec),
        ...spec.argv,
      ],
    });
  }
}

/** The bwrap command line (without the program and the command) for one process spec. */
export function bubblewrapArguments(spec: ProcessSpec, inIsolatedNetwork = false, etcDirectory?: string): string[] {
  const args = [
    '--unshare-all',
    ...(inIsolatedNetwork ? ['--share-net'] : []),
    '--die-with-parent',
    '--new-session',
    '--hostname',
    'localhost',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
  ];
  for (const dir of SYSTEM_DIRECTORIES) args.push(...systemMount(dir));
  if (etcDirectory) {
    args.push('--ro-bind', etcDirectory, '/etc');
    for (const dir of ETC_DIRECTORIES) if (existsSync(dir)) args.push('--ro-bind', dir, dir);
  } else for (const file of ETC_FILES) if (existsSync(file)) args.push('--ro-bind', file, file);
  for (const path of spec.readOnlyPaths ?? []) {
    requireAbsolute(path, 'readOnlyPaths');
    args.push('--ro-bind', path, path);
  }
  // Writable binds come last so they win over a read-only bind of a parent directory.
  for (const path of [...(spec.writablePaths ?? []), ...(spec.tree ? [] : [spec.cwd])]) {
    requireAbsolute(path, 'writablePaths');
    args.push('--bind', path, path);
  }
  if (spec.tree) args.push(...treeArguments(spec.tree));
  args.push('--chdir', spec.cwd);
  return args;
}

/** Made by bwrap in the sandbox's own root (parents included), in order: mounts, dirs, symlinks. */
function treeArguments(tree: SandboxTree): string[] {
  const args: string[] = [];
  for (const m of tree.mounts) {
    requireAbsolute(m.host, 'tree mounts');
    requireAbsolute(m.at, 'tree mounts');
    args.push('--bind', m.host, m.at);
  }
  for (const dir of tree.dirs) {
    requireAbsolute(dir, 'tree dirs');
    args.push('--dir', dir);
  }
  for (const link of tree.symlinks) {
    requireAbsolute(link.path, 'tree symlinks');
    args.push('--symlink', link.target, link.path);
  }
  return args;
}

function identity(options: BubblewrapProcessRunnerOptions): string[] {
  if (options.uid === undefined && options.gid === undefined) return [];
  const uid = options.uid ?? process.getuid?.() ?? 0;
  const gid = options.gid ?? process.getgid?.() ?? 0;
  return ['--unshare-user', '--uid', String(uid), '--gid', String(gid)];
}

/**
 * bwrap always sets PWD to the directory it changed into; `env` (from the read-only /usr) puts
 * back exactly what the spec says, so the environment inside matches the plain runner's. Bash
 * needs no such help (a genrule is always Bash): started without PWD it sets and exports
 * PWD=<its working directory> itself, which is what bwrap set, so one exec per action is saved.
 */
function exactPwd(spec: ProcessSpec): string[] {
  const pwd = spec.env.PWD;
  const program = spec.argv[0] ?? '';
  if (program.includes('=')) {
    throw new TypeError(`the sandbox cannot run a program whose name contains '=': '${program}'`);
  }
  if ((pwd === undefined || pwd === spec.cwd) && basename(program) === 'bash') return [];
  return pwd === undefined ? ['/usr/bin/env', '-u', 'PWD'] : ['/usr/bin/env', `PWD=${pwd}`];
}

/** On merged-/usr systems /bin, /lib... are symlinks into /usr: recreate the link, do not bind. */
function systemMount(dir: string): string[] {
  let stat;
  try {
    stat = lstatSync(dir);
  } catch {
    return [];
  }
  if (stat.isSymbolicLink()) return ['--symlink', readlinkSync(dir), dir];
  return ['--ro-bind', dir, dir];
}

function requireAbsolute(path: string, field: string): void {
  if (!isAbsolute(path)) throw new TypeError(`sandbox ${field} must be absolute paths, got '${path}'`);
}
