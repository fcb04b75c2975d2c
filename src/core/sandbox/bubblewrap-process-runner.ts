import { unlink } from 'node:fs/promises';
import { basename } from 'node:path';
import { joiningCgroups } from './join-cgroups.js';
import type { ProcessResult, ProcessRunner, ProcessSpec } from './process-runner.js';
import { sandboxSteps, type SandboxStep } from './sandbox-plan.js';
import { spawnProcessGroup } from './spawn-process-group.js';
import type { ProcessGroupSpawner } from './spawn-server.js';

export interface BubblewrapProcessRunnerOptions {
  /** Path of the bwrap executable (see detectSandboxSupport). */
  readonly bwrapPath: string;
  /**
   * The user and group the process runs as inside the sandbox (default: Kiln's own). Its files
   * still belong to Kiln's user outside; this only keeps a root Kiln from running actions as root.
   */
  readonly uid?: number;
  readonly gid?: number;
  /**
   * bwrap itself starts as this host user (through util-linux's `setpriv`), so the sandbox's user
   * namespace maps the process to it. With only `uid`/`gid`, a root Kiln's process is still host
   * root inside, owner of every root-owned file it can see; this makes it a stranger to them.
   */
  readonly hostUser?: { readonly uid: number; readonly gid: number; readonly setprivPath: string };
  /** Starts bwrap: in-process by default, or a SpawnServer's `run`. */
  readonly spawn?: ProcessGroupSpawner;
  /**
   * `spawn` starts bwrap from inside a network namespace of its own with no network (a SpawnServer
   * under isolatedNetworkWrapper): the sandbox keeps that namespace instead of making one per
   * process. Creating and tearing down a network namespace is half of bwrap's cost here.
   */
  readonly inIsolatedNetwork?: boolean;
  /** A directory made by prepareSandboxEtc, mounted as the sandbox's /etc (see sandboxSteps). */
  readonly etcDirectory?: string;
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
  /** bwrap takes at most 9,000 arguments (three per symlink), and Linux 2 MiB of them with the environment. */
  readonly treeLimit = { entries: 2000, bytes: 1024 * 1024 };

  constructor(private readonly options: BubblewrapProcessRunnerOptions) {}

  async run(spec: ProcessSpec): Promise<ProcessResult> {
    const spawn = this.options.spawn ?? spawnProcessGroup;
    const steps = sandboxSteps(spec, this.options.etcDirectory);
    try {
      const bwrap = {
        ...spec,
        // bwrap itself starts on the host; a tree's working directory exists only inside.
        cwd: spec.tree ? '/' : spec.cwd,
        argv: [
          ...hostUserPrefix(this.options),
          this.options.bwrapPath,
          ...identity(this.options),
          ...bubblewrapArguments(spec, steps, this.options.inIsolatedNetwork ?? false),
          '--',
          ...exactPwd(spec),
          ...spec.argv,
        ],
      };
      // Joined on the host, before setpriv and bwrap: the sandbox is in the cgroups from its start.
      return await spawn(joiningCgroups(bwrap, spec.cgroups));
    } finally {
      // Symlinks the tree made on host mounts go, as the native sandbox removes them itself.
      await Promise.all(steps.map((step) => (step.kind === 'symlink' && step.onHost ? unlink(step.onHost.path).catch(() => {}) : undefined)));
    }
  }
}

/** The bwrap command line (without the program and the command) for one process spec and its steps. */
export function bubblewrapArguments(spec: ProcessSpec, steps: readonly SandboxStep[], inIsolatedNetwork = false): string[] {
  const args = [
    '--unshare-all',
    ...(inIsolatedNetwork ? ['--share-net'] : []),
    '--die-with-parent',
    '--new-session',
    '--hostname',
    'localhost',
    '--cap-drop',
    'ALL',
  ];
  for (const step of steps) args.push(...bubblewrapStep(step));
  args.push('--chdir', spec.cwd);
  return args;
}

function bubblewrapStep(step: SandboxStep): string[] {
  switch (step.kind) {
    case 'ro-bind':
    case 'bind':
    case 'symlink':
      return [`--${step.kind}`, step.from, step.at];
    case 'dir':
    case 'tmpfs':
    case 'proc':
    case 'dev':
      return [`--${step.kind}`, step.at];
    case 'tmpfs-mount':
      return ['--tmpfs', step.at];
  }
}

function hostUserPrefix({ hostUser }: BubblewrapProcessRunnerOptions): string[] {
  if (!hostUser) return [];
  return [hostUser.setprivPath, `--reuid=${hostUser.uid}`, `--regid=${hostUser.gid}`, '--clear-groups', '--'];
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
