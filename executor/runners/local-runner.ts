import {
  BubblewrapProcessRunner,
  detectSandboxSupport,
  exitStatusOf,
  createProcessStarter,
  LocalProcessRunner,
  type ProcessRunner,
  type ProcessStarter,
} from '../../src/core/index.js';
import { awaitSandboxExit } from './await-sandbox-exit.js';
import { CgroupLimits } from './cgroup-limits.js';
import { grantBuildDirectory } from './grant-build-directory.js';
import type { ResourceLimitPolicy } from './resource-limits.js';
import type { RunRequest, RunResult, Runner } from './runner.js';
import { probeHostUser, SANDBOX_HOST_USER, checkReachableBy } from './sandbox-host-user.js';
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
   * Memory, pids and CPU limits of each action, through cgroups (CgroupLimits); default
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
 * make them (CgroupLimits), which it says once through `log` when it cannot.
 */
export class LocalRunner implements Runner {
  private constructor(
    private readonly processes: ProcessRunner,
    private readonly server: ProcessStarter | undefined,
    private readonly limits: CgroupLimits | undefined,
    readonly actionUser: 'separate' | 'sandboxed' | 'unconfined',
    /** The sandbox's bwrap, to wait for after a kill (see awaitSandboxExit). */
    private readonly bwrapPath?: string,
    /** The host user actions run as when it is not the executor's (their build directory is handed to it). */
    private readonly hostUser?: { readonly uid: number; readonly gid: number },
  ) {}

  static async create(options: LocalRunnerOptions = {}): Promise<LocalRunner> {
    const log = options.log ?? ((m) => process.stderr.write(`${m}\n`));
    const limits = CgroupLimits.open(options.limits, log);
    const server = options.spawnServer === false ? undefined : createProcessStarter();
    // Under limits every process starts through the cgroup-joining spawner (on the host, before bwrap).
    const spawn = limits ? limits.spawner(server?.run) : server?.run;
    if (options.sandbox === 'off') return new LocalRunner(new LocalProcessRunner(spawn), server, limits, 'unconfined');
    const support = await detectSandboxSupport();
    if (!support.available) {
      log(`local runner: running actions without a sandbox: ${support.reason}`);
      return new LocalRunner(new LocalProcessRunner(spawn), server, limits, 'unconfined');
    }
    const spawnOption = spawn ? { spawn } : {};
    if (process.getuid?.() !== 0) {
      // Unprivileged: the sandbox can map only the executor's own user, so inputs are copies.
      return new LocalRunner(new BubblewrapProcessRunner({ bwrapPath: support.bwrapPath, ...spawnOption }), server, limits, 'sandboxed', support.bwrapPath);
    }
    // A root executor runs sandboxed actions as the host user nobody, a stranger to the executor's files.
    const hostUser = await probeHostUser(support.bwrapPath);
    if ('reason' in hostUser) {
      log(`local runner: sandboxed actions run in a user namespace of root, and get copies of their inputs: ${hostUser.reason}`);
      return new LocalRunner(new BubblewrapProcessRunner({ bwrapPath: support.bwrapPath, ...SANDBOX_HOST_USER, ...spawnOption }), server, limits, 'sandboxed', support.bwrapPath);
    }
    const processes = new BubblewrapProcessRunner({ bwrapPath: support.bwrapPath, ...SANDBOX_HOST_USER, hostUser, ...spawnOption });
    return new LocalRunner(processes, server, limits, 'separate', support.bwrapPath, SANDBOX_HOST_USER);
  }

  /** How the limits are enforced (`cgroup v1` or `cgroup v2`), or false when they are not. */
  get enforcesLimits(): string | false {
    return this.limits ? `cgroup v${this.limits.version}` : false;
  }

  get name(): string {
    return this.processes.name;
  }

  run(request: RunRequest): Promise<RunResult> {
    return this.limits ? this.limits.within(request.platform, () => this.runProcess(request)) : this.runProcess(request);
  }

  private async runProcess(request: RunRequest): Promise<RunResult> {
    const cwd = resolveWorkingDirectory(request.buildDirectory, request.workingDirectory);
    if (this.hostUser) {
      await checkReachableBy(request.buildDirectory, this.hostUser);
      await grantBuildDirectory(request.buildDirectory, this.hostUser.uid, this.hostUser.gid);
    }
    const startedAtMs = Date.now();
    const result = await this.processes.run({
      argv: request.arguments,
      cwd,
      env: request.environment,
      timeoutMs: request.timeoutMs,
      stdout: request.stdout,
      stderr: request.stderr,
      writablePaths: [request.buildDirectory],
      signal: request.signal,
    });
    // A killed sandbox's last processes die just after bwrap: the caller looks at the build directory next.
    if (this.bwrapPath && (result.timedOut || request.signal?.aborted)) await awaitSandboxExit(this.bwrapPath, request.buildDirectory);
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
    this.limits?.close();
  }
}
