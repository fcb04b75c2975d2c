import {
  BubblewrapProcessRunner,
  detectSandboxSupport,
  exitStatusOf,
  createProcessStarter,
  LocalProcessRunner,
  type ProcessRunner,
  type ProcessStarter,
} from '../../src/core/index.js';
import { CgroupLimits } from './cgroup-limits.js';
import type { ResourceLimitPolicy } from './resource-limits.js';
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
  ) {}

  static async create(options: LocalRunnerOptions = {}): Promise<LocalRunner> {
    const limits = CgroupLimits.open(options.limits, options.log ?? ((m) => process.stderr.write(`${m}\n`)));
    const server = options.spawnServer === false ? undefined : createProcessStarter();
    // Under limits every process starts through the cgroup-joining spawner (on the host, before bwrap).
    const spawn = limits ? limits.spawner(server?.run) : server?.run;
    if (options.sandbox === 'off') return new LocalRunner(new LocalProcessRunner(spawn), server, limits);
    const support = await detectSandboxSupport();
    if (!support.available) {
      (options.log ?? ((m) => process.stderr.write(`${m}\n`)))(`local runner: running actions without a sandbox: ${support.reason}`);
      return new LocalRunner(new LocalProcessRunner(spawn), server, limits);
    }
    // A root executor runs sandboxed actions as nobody, as the Docker runner uses a non-root user.
    const ids = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    return new LocalRunner(new BubblewrapProcessRunner({ bwrapPath: support.bwrapPath, ...ids, ...(spawn ? { spawn } : {}) }), server, limits);
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
