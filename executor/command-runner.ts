/** One platform property of the action (Platform.Property). */
export interface PlatformProperty {
  readonly name: string;
  readonly value: string;
}

/**
 * What the build executor needs from a runner (Docker container, local sandbox): run one Command in a
 * prepared build directory, exactly with its arguments, environment and working directory, its
 * stdout/stderr written to the given files, killed at the timeout or when `signal` aborts.
 * The runners under executor/runners/ are adapted to this shape in the executor's main.
 */
export interface CommandRunner {
  run(request: CommandRun): Promise<CommandOutcome>;
}

export interface CommandRun {
  /** Absolute: the materialised input root; outputs are collected from it afterwards. */
  readonly buildDirectory: string;
  /** Command.working_directory, relative to the build directory ('' = the build directory). */
  readonly workingDirectory: string;
  readonly arguments: readonly string[];
  /** Command.environment_variables; nothing else is inherited. */
  readonly environment: Readonly<Record<string, string>>;
  /** The action's platform (container-image, limits...). */
  readonly platform: readonly PlatformProperty[];
  readonly timeoutMs: number;
  readonly stdoutPath: string;
  readonly stderrPath: string;
  readonly signal: AbortSignal;
}

export interface CommandOutcome {
  /** The exit status; 128 + signal number when a signal ended the process. */
  readonly exitCode: number;
  readonly timedOut: boolean;
}
