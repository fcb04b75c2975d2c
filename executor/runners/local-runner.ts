import { availableParallelism } from 'node:os';
import {
  BubblewrapProcessRunner,
  detectSandboxSupport,
  exitStatusOf,
  createProcessStarter,
  LocalProcessRunner,
  spawnProcessGroup,
  type ProcessGroupSpawner,
  type ProcessRunner,
  type ProcessStarter,
} from '../../src/core/index.js';
import { ActionCgroups, type ActionCgroup } from './action-cgroups.js';
import { defaultResourceLimitPolicy, limitsForAction, type ResourceLimitPolicy } from './resource-limits.js';
import type { RunRequest, RunResult, Runner } from './runner.js';
import { resolveWorkingDirectory } from './working-directory.js';

export interface LocalRunnerOptions {
  /** `auto` (default): the namespace sandbox when this machine has one, else a plain process. */
  readonly sandbox?: 'auto' | 'off';
  /** Where the one-time note about falling back to a plain process goes. */
  readonly log?: (message: string) => void;
  /**
   * Start processes from a helper process (createProcessStarter, default true) rather than the
   * executor's: Node forks its whole heap for every child, which costs the executor more CPU than a
   * no-op action itself; the native helper starts them for a fraction of that, on another core.
   */
  readonly spawnServer?: boolean;
  /**
   * Memory, pids and CPU limits of each action, through cgroups (see ActionCgroups); default
   * defaultResourceLimitPolicy. `null`: none, and no cgroups are made.
   */
  readonly limits?: ResourceLimitPolicy | null;
}

/**
 * Runs a Command as a process in the build directory, for machines without Docker: inside the
 * namespace sandbox of src/core/sandbox when available (the build directory is its only writable
 * and visible non-system path; no network), else as a plain process, which it says once.
 * Platform properties other than the limit properties (resource-limits.ts) are not interpreted: the
 * host is the platform. Memory, pids and CPU limits apply through cgroups where this process may
 * make them (ActionCgroups), which it says once through `log` when it cannot.
 */
export class LocalRunner implements Runner {
  private readonly processes: ProcessRunner;

  private constructor(
    /** The process runner of one action, its processes started through `spawn`. */
    private readonly processRunner: (spawn: ProcessGroupSpawner) => ProcessRunner,
    private readonly spawn: ProcessGroupSpawner,
    private readonly server: ProcessStarter | undefined,
    private readonly limits: { readonly policy: ResourceLimitPolicy; readonly cgroups: ActionCgroups } | undefined,
  ) {
    this.processes = processRunner(spawn);
  }

  static async create(options: LocalRunnerOptions = {}): Promise<LocalRunner> {
    const log = options.log ?? ((m) => process.stderr.write(`${m}\n`));
    const server = options.spawnServer === false ? undefined : createProcessStarter();
    const spawn = server?.run ?? spawnProcessGroup;
    const limits = LocalRunner.openLimits(options.limits, log);
    if (options.sandbox === 'off') return new LocalRunner((s) => new LocalProcessRunner(s), spawn, server, limits);
    const support = await detectSandboxSupport();
    if (!support.available) {
      log(`local runner: running actions without a sandbox: ${support.reason}`);
      return new LocalRunner((s) => new LocalProcessRunner(s), spawn, server, limits);
    }
    // A root executor runs sandboxed actions as nobody, as the Docker runner uses a non-root user.
    const ids = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    return new LocalRunner((s) => new BubblewrapProcessRunner({ bwrapPath: support.bwrapPath, ...ids, spawn: s }), spawn, server, limits);
  }

  /** The cgroups that enforce the limits, or undefined (said through `log`) when this machine has none for us. */
  private static openLimits(
    policy: ResourceLimitPolicy | null | undefined,
    log: (message: string) => void,
  ): { policy: ResourceLimitPolicy; cgroups: ActionCgroups } | undefined {
    if (policy === null) return undefined;
    const cgroups = ActionCgroups.open();
    if (!(cgroups instanceof ActionCgroups)) {
      log(`local runner: actions run without memory, pids or CPU limits: ${cgroups.reason} (the docker runner has them)`);
      return undefined;
    }
    return { policy: policy ?? defaultResourceLimitPolicy(availableParallelism()), cgroups };
  }

  get name(): string {
    return this.processes.name;
  }

  /** Whether actions run under memory, pids and CPU limits (cgroup v1 or v2), or without. */
  get enforcesLimits(): false | 'cgroup v1' | 'cgroup v2' {
    return this.limits ? `cgroup v${this.limits.cgroups.version}` : false;
  }

  async run(request: RunRequest): Promise<RunResult> {
    const cwd = resolveWorkingDirectory(request.buildDirectory, request.workingDirectory);
    if (!this.limits) return this.runIn(this.processes, request, cwd);
    const cgroup = this.limits.cgroups.make(limitsForAction(this.limits.policy, request.platform));
    try {
      const result = await this.runIn(this.processRunner(joinCgroupFirst(this.spawn, cgroup)), request, cwd);
      return cgroup.outOfMemory() ? { ...result, outOfMemory: true } : result;
    } finally {
      await cgroup.remove();
    }
  }

  private async runIn(processes: ProcessRunner, request: RunRequest, cwd: string): Promise<RunResult> {
    const startedAtMs = Date.now();
    const result = await processes.run({
      argv: request.arguments,
      cwd,
      env: request.environment,
      timeoutMs: request.timeoutMs,
      stdout: request.stdout,
      stderr: request.stderr,
      writablePaths: [request.buildDirectory],
      signal: request.signal,
    });
    return {
      exitCode: exitStatusOf(result),
      timedOut: result.timedOut,
      outOfMemory: false,
      stdout: result.stdout,
      stderr: result.stderr,
      stdoutTruncated: result.stdoutTruncated,
      stderrTruncated: result.stderrTruncated,
      stdoutSpilled: result.stdoutSpilled === true,
      stderrSpilled: result.stderrSpilled === true,
      startedAtMs,
      completedAtMs: Date.now(),
    };
  }

  /** Ends the helper process (runs still pending fail) and removes the runner's cgroups. */
  async close(): Promise<void> {
    await this.server?.close();
    this.limits?.cgroups.close();
  }
}

/**
 * Starts every process through a shell that first moves itself into the action's cgroup, so the
 * command and everything it forks are limited from their first instruction (a pid written after the
 * start would let early children escape). The shell adds PWD to the environment; `env` puts back
 * exactly the command's.
 */
function joinCgroupFirst(spawn: ProcessGroupSpawner, cgroup: ActionCgroup): ProcessGroupSpawner {
  const script = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';
  return (spec) => {
    const program = spec.argv[0] ?? '';
    if (program.includes('=')) throw new TypeError(`cannot run a program whose name contains '=' under cgroup limits: '${program}'`);
    const pwd = spec.env.PWD === undefined ? ['-u', 'PWD'] : [`PWD=${spec.env.PWD}`];
    return spawn({ ...spec, argv: ['/bin/sh', '-c', script, 'kiln-cgroup', ...cgroup.procsFiles, '--', '/usr/bin/env', ...pwd, ...spec.argv] });
  };
}
