import { FailedPreconditionError } from '../../src/core/index.js';
import {
  chooseSandbox,
  exitStatusOf,
  createProcessStarter,
  LocalProcessRunner,
  type ProcessRunner,
  type ProcessStarter,
} from '../../src/core/sandbox/index.js';
import { awaitSandboxExit } from './await-sandbox-exit.js';
import type { CgroupPaths } from './action-cgroups.js';
import { CgroupLimits } from './cgroup-limits.js';
import { grantBuildDirectory } from './grant-build-directory.js';
import type { ResourceLimitPolicy } from './resource-limits.js';
import type { RunRequest, RunResult, Runner } from './runner.js';
import { SANDBOX_HOST_USER, checkReachableBy } from './sandbox-host-user.js';
import { containerImageOf } from './container-image.js';
import { resolveWorkingDirectory } from './working-directory.js';

export interface LocalRunnerOptions {
  /** `auto` (default): the namespace sandbox when this machine has one, else a plain process. */
  readonly sandbox?: 'auto' | 'off';
  /** false: bubblewrap rather than the native sandbox (tests of that fallback). */
  readonly nativeSandbox?: boolean;
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
  /** Where the cgroup hierarchy is read (default: this process's, under /proc); tests point it elsewhere. */
  readonly cgroupPaths?: CgroupPaths;
}

/**
 * Runs a Command as a process in the build directory, for machines without Docker: inside the
 * sandbox `kiln build --spawn_strategy=sandboxed` uses (chooseSandbox: the native sandbox, else
 * bubblewrap; the build directory is its only writable and visible non-system path; no network,
 * a network namespace per action; as nobody when the executor is root), else as a plain process,
 * which it says once. Platform properties other than the limit properties (resource-limits.ts) are
 * not interpreted: the host is the platform, and `container-image` is refused. Memory, pids and CPU
 * limits apply through cgroups where this process may make them (CgroupLimits), which it says once
 * through `log` when it cannot.
 */
export class LocalRunner implements Runner {
  private constructor(
    private readonly processes: ProcessRunner,
    private readonly server: ProcessStarter | undefined,
    private readonly limits: CgroupLimits | undefined,
    readonly actionUser: 'separate' | 'sandboxed' | 'unconfined',
    /** Which sandbox runs the actions, when one does. */
    readonly sandbox?: { readonly kind: 'native' | 'bubblewrap'; readonly bwrapPath?: string; close(): Promise<void> },
  ) {}

  static async create(options: LocalRunnerOptions = {}): Promise<LocalRunner> {
    const log = options.log ?? ((m) => process.stderr.write(`${m}\n`));
    const limits = CgroupLimits.open(options.limits, log, options.cgroupPaths);
    const server = options.spawnServer === false ? undefined : createProcessStarter();
    const plain = () => new LocalRunner(new LocalProcessRunner(server?.run), server, limits, 'unconfined');
    if (options.sandbox === 'off') return plain();
    const choice = await chooseSandbox({
      hostUser: SANDBOX_HOST_USER,
      networkPerRun: true,
      native: options.nativeSandbox !== false,
      ...(server ? { spawn: server.run } : {}),
    });
    if (!choice.available) {
      log(`local runner: running actions without a sandbox: ${choice.reason}`);
      return plain();
    }
    if (choice.note) log(`local runner: ${choice.note}`);
    return new LocalRunner(choice.runner, server, limits, choice.actionUser, choice);
  }

  /** How the limits are enforced (`cgroup v1` or `cgroup v2`), or false when they are not. */
  get enforcesLimits(): string | false {
    return this.limits ? `cgroup v${this.limits.version}` : false;
  }

  get name(): string {
    return this.processes.name;
  }

  run(request: RunRequest): Promise<RunResult> {
    const image = containerImageOf(request.platform);
    if (image !== undefined) {
      return Promise.reject(
        new FailedPreconditionError(
          `platform property container-image=${JSON.stringify(image.slice(0, 1000))}: the local runner runs actions on the host and has no images; run the executor with the docker runner`,
        ),
      );
    }
    return this.limits ? this.limits.within(request.platform, (cgroups) => this.runProcess(request, cgroups)) : this.runProcess(request);
  }

  private async runProcess(request: RunRequest, cgroups?: readonly string[]): Promise<RunResult> {
    const cwd = resolveWorkingDirectory(request.buildDirectory, request.workingDirectory);
    if (this.actionUser === 'separate') {
      // The actions run as SANDBOX_HOST_USER: it must reach the build directory and own its directories.
      await checkReachableBy(request.buildDirectory, SANDBOX_HOST_USER);
      await grantBuildDirectory(request.buildDirectory, SANDBOX_HOST_USER.uid, SANDBOX_HOST_USER.gid);
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
      ...(cgroups ? { cgroups } : {}),
    });
    // A killed bwrap sandbox's last processes die just after bwrap: the caller looks at the build directory next.
    // (The native sandbox reports a killed run only once its pid namespace is gone.)
    const bwrapPath = this.sandbox?.bwrapPath;
    if (bwrapPath && (result.timedOut || request.signal?.aborted)) await awaitSandboxExit(bwrapPath, request.buildDirectory);
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

  /** Ends the helper processes (runs still pending fail) and removes the runner's cgroups. */
  async close(): Promise<void> {
    await Promise.all([this.server?.close(), this.sandbox?.close()]);
    this.limits?.close();
  }
}
