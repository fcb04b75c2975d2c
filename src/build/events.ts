import { formatPosition, type Position } from '../core/index.js';
import type { ClosingOptions, ExecutionReporter } from '../exec/index.js';
import type { BuiltTarget } from './build-graph.js';
import type { OutputDirectories } from '../analysis/index.js';
import type { TestOutcome } from './test-outcome.js';

/**
 * What the build tool reports while it works, as data (Bazel's `Event`s to its `Reporter`): the
 * command line's printer turns each into Bazel's words. Execution progress goes to the
 * `ExecutionReporter` the printer supplies.
 */
export type BuildEvent =
  | { readonly kind: 'error'; readonly message: string; readonly pos?: Position }
  | { readonly kind: 'warning'; readonly message: string; readonly pos?: Position }
  | { readonly kind: 'info'; readonly message: string }
  /** `print()` of a BUILD or `.bzl` file, or a rule's `ctx` debug output; `where` is its position as text. */
  | { readonly kind: 'debug'; readonly message: string; readonly where?: string }
  /** `build` or `test` without target patterns (only a warning: Bazel builds nothing). */
  | { readonly kind: 'no-patterns'; readonly command: string }
  /** Loading and analysis are over. `tests` only for `kiln test`. */
  | {
      readonly kind: 'analyzed';
      readonly targets: number;
      readonly packagesLoaded: number;
      readonly targetsConfigured: number;
      readonly tests?: number;
    }
  /** Another Kiln command holds the output base; this one waits. */
  | { readonly kind: 'waiting-for-lock'; readonly pid: number; readonly outputBase: string }
  /** `--nobuild`: analysis only, nothing executed. */
  | { readonly kind: 'nothing-executed' }
  /** The build failed before its closing lines (Bazel's `FAILED: Build did NOT complete successfully`). */
  | { readonly kind: 'build-failed' };

export type BuildEventSink = (event: BuildEvent) => void;

/** A warning as the caches keep it, to report it again when a stored result is reused. */
export function warningText(event: { readonly message: string; readonly pos?: Position }): string {
  return event.pos ? `${formatPosition(event.pos)}: ${event.message}` : event.message;
}

/** What the closing lines of a build say: the test summary's blocks, the targets built, the time taken. */
export interface ClosingReport {
  readonly success: boolean;
  readonly targets: readonly BuiltTarget[];
  readonly outputDirectories: Pick<OutputDirectories, 'bin' | 'genfiles'>;
  /** `kiln test`: every test's outcome. */
  readonly testOutcomes?: readonly TestOutcome[];
  /** `performance.now()` when the command started. */
  readonly startedAt: number;
}

/** One finished run (attempt) of a test, as Bazel reports it when it ends. */
export interface TestRunFinished {
  /** The test's label, with its shard and run when it has several. */
  readonly name: string;
  readonly failed: boolean;
  readonly timedOut: boolean;
  /** Where the attempt's log is shown (its `test_attempts/` copy when the run is tried again). */
  readonly shownLog: string;
  /** The run's `test.log`, whose body `--test_output` may print. */
  readonly logPath: string;
  /** `--test_output=all`, or `errors` and this run failed. */
  readonly printLog: boolean;
}

/**
 * The face of the command line, which the build tool reports through: events, the execution
 * reporter of its choice (terminal or plain), the closing lines' text and the test runs' output.
 */
/** The flags of the execution reporter: `--verbose_failures`, `--subcommands`, `--output_filter`, `--show_progress_rate_limit`. */
export interface ReporterFlags {
  readonly verboseFailures: boolean;
  readonly subcommands: boolean;
  readonly outputFilter?: RegExp;
  /** `--show_progress_rate_limit` in milliseconds: the least time between two progress messages. */
  readonly progressRateLimitMs?: number;
}

export interface BuildUi {
  readonly event: BuildEventSink;
  executionReporter(closing: ClosingOptions, flags: ReporterFlags): ExecutionReporter;
  closingLines(report: ClosingReport): string;
  /** A test run finished (printed between progress lines: the caller interjects it). */
  testRunFinished(run: TestRunFinished): void;
  /** `--test_output=streamed`: a test's output as it comes. */
  testOutput(text: string): void;
}
