import {
  createSandboxedProcessRunner,
  exitStatusOf,
  LocalProcessRunner,
  type ProcessRunner,
} from '../../src/core/index.js';
import type { RunRequest, RunResult, Runner } from './runner.js';
import { resolveWorkingDirectory } from './working-directory.js';

export interface LocalRunnerOptions {
  /** `auto` (default): the namespace sandbox when this machine has one, else a plain process. */
  readonly sandbox?: 'auto' | 'off';
  /** Where the one-time note about falling back to a plain process goes. */
  readonly log?: (message: string) => void;
}

/**
 * Runs a Command as a process in the build directory, for machines without Docker: inside the
 * namespace sandbox of src/core/sandbox when available (the build directory is its only writable
 * and visible non-system path; no network), else as a plain process, which it says once.
 * Platform properties are not interpreted: the host is the platform.
 */
export class LocalRunner implements Runner {
  private constructor(private readonly processes: ProcessRunner) {}

  static async create(options: LocalRunnerOptions = {}): Promise<LocalRunner> {
    if (options.sandbox === 'off') return new LocalRunner(new LocalProcessRunner());
    // A root executor runs sandboxed actions as nobody, as the Docker runner uses a non-root user.
    const asRoot = process.getuid?.() === 0;
    const choice = await createSandboxedProcessRunner(asRoot ? { uid: 65534, gid: 65534 } : {});
    if (choice.fallbackReason) {
      (options.log ?? ((m) => process.stderr.write(`${m}\n`)))(
        `local runner: running actions without a sandbox: ${choice.fallbackReason}`,
      );
    }
    return new LocalRunner(choice.runner);
  }

  get name(): string {
    return this.processes.name;
  }

  async run(request: RunRequest): Promise<RunResult> {
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
}
