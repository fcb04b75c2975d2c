import { ExitCode, formatPosition, shellQuote } from '../core/index.js';
import type { Action } from '../actions/index.js';
import type { CheckedFile } from './checked-files.js';

/** How a finished action was satisfied, named as Bazel's process summary names it. */
export type ProcessKind = 'disk cache hit' | 'remote cache hit' | 'internal' | 'remote' | 'linux-sandbox' | 'local';

/** Bazel's order in `INFO: N processes: ...`: cache hits, internal, remote, then runners by name. */
export const PROCESS_KIND_ORDER: readonly ProcessKind[] = ['disk cache hit', 'remote cache hit', 'internal', 'remote', 'linux-sandbox', 'local'];

/** Why an action failed, with what the user needs to fix it. */
export interface ActionFailure {
  readonly action: Action;
  /** One line, e.g. `Executing genrule //pkg:x failed (Exit 1)`. */
  readonly message: string;
  /** The command as a shell line (`(cd /execroot && exec env - ... )`), shown with --verbose_failures. */
  readonly command?: string;
  /** What the process wrote, shown after the message. */
  readonly stdout?: Buffer;
  readonly stderr?: Buffer;
  /** Bazel's exit code for this failure where it is not a build failure's 1 (34: the remote system failed). */
  readonly exitCode?: number;
}

/** The build's exit code for its failed actions: a remote failure's 34 wins over a command's 1, as in Bazel. */
export function failedActionsExitCode(failures: readonly ActionFailure[]): number {
  return failures.some((f) => f.exitCode === ExitCode.REMOTE_ERROR) ? ExitCode.REMOTE_ERROR : ExitCode.BUILD_FAILURE;
}

export interface ExecutionSummary {
  readonly success: boolean;
  /** Actions the build needed, whether run, restored from a cache or found up to date. */
  readonly totalActions: number;
  /** Processes by kind; actions the local action cache found up to date are not processes. */
  readonly processes: Readonly<Record<ProcessKind, number>>;
  readonly failures: readonly ActionFailure[];
  /** `kiln test`: tests that failed (or timed out); the closing line then says so, as Bazel's does. */
  readonly failedTests?: number;
  /**
   * With `listCheckedFiles`, when the build succeeded without a remote cache and every action's result
   * is in the local action cache (so the same build again is a null build): the files whose stamps that
   * depends on (see checkedFiles); absent otherwise.
   */
  readonly checkedFiles?: readonly CheckedFile[];
}

/** How an action's process ended (Bazel's SpawnResult, as far as a caller reads it). */
export interface ProcessEnd {
  readonly exitCode: number;
  /** Killed at its timeout (`Action.timeoutSeconds`), here or by the remote server. */
  readonly timedOut: boolean;
  readonly wallTimeMs: number;
}

/** Receives execution events; the CLI renders them on a terminal or as plain lines. */
export interface ExecutionReporter {
  buildStarted(totalActions: number): void;
  /** `command` is the shell line that reproduces the spawn (printed with `--subcommands`). */
  actionStarted(action: Action, runnerName: string, command: string): void;
  /**
   * `kind` undefined: found up to date in the local action cache. `process`: how its process ended,
   * when one ran here or remotely (a test's result when its files could not say: a timeout).
   */
  actionFinished(action: Action, kind: ProcessKind | undefined, process?: ProcessEnd): void;
  actionFailed(failure: ActionFailure): void;
  /** What a successful action's process wrote (not a test's: that goes to its log), printed as Bazel's `INFO: From ...:`. */
  actionOutput?(action: Action, output: ActionOutput): void;
  warning(message: string): void;
  buildFinished(summary: ExecutionSummary): void;
  /** Writes any progress it holds back, so that what the caller writes next comes after it. */
  flush?(): void;
  /**
   * Runs `write`, which prints lines of the caller's own (on any stream), where they cannot clash with
   * the reporter's output: after pending progress, with a terminal's status block erased and redrawn below.
   */
  interject?(write: () => void): void;
}

/** `INFO: 7 processes: 2 disk cache hit, 5 linux-sandbox.` (only non-zero kinds, Bazel's order). */
export function formatProcessSummary(processes: Readonly<Record<ProcessKind, number>>): string {
  const total = PROCESS_KIND_ORDER.reduce((sum, kind) => sum + processes[kind], 0);
  const parts = PROCESS_KIND_ORDER.filter((kind) => processes[kind] > 0).map((kind) => `${processes[kind]} ${kind}`);
  const head = `INFO: ${total} process${total === 1 ? '' : 'es'}`;
  return parts.length === 0 ? `${head}.` : `${head}: ${parts.join(', ')}.`;
}

/** The closing line(s) of a build, as Bazel prints them. */
export function formatCompletion(summary: ExecutionSummary): string[] {
  if (summary.success) {
    const n = summary.totalActions;
    const actions = `${n} total action${n === 1 ? '' : 's'}`;
    const failed = summary.failedTests ?? 0;
    if (failed > 0) return [`INFO: Build completed, ${failed} test${failed === 1 ? '' : 's'} FAILED, ${actions}`];
    return [`INFO: Build completed successfully, ${actions}`];
  }
  return ['FAILED: Build did NOT complete successfully'];
}

/** What a command adds to the closing lines execution prints. */
export interface ClosingOptions {
  /**
   * The command's own lines (Bazel's test summary, `Target //x up-to-date:` block, elapsed time),
   * printed once live progress is gone, before the process summary.
   */
  readonly closingLines?: (summary: ExecutionSummary) => string;
  /** Loading or analysis failed under --keep_going: the build fails whatever execution does. */
  readonly failedBeforeExecution?: boolean;
}

/** Everything a reporter prints when the build ends: the command's lines, the process summary, the closing line. */
export function formatClosing(executed: ExecutionSummary, options: ClosingOptions): string {
  const summary = options.failedBeforeExecution ? { ...executed, success: false } : executed;
  const completion = formatCompletion(summary).map((line) => `${line}\n`);
  return `${options.closingLines?.(summary) ?? ''}${formatProcessSummary(summary.processes)}\n${completion.join('')}`;
}

/** `ERROR: pkg/BUILD:3:1: <message>` plus the command (verbose) and the process's output. */
export function formatFailure(failure: ActionFailure, verboseFailures: boolean): string {
  const where = failure.action.location ? `${formatPosition(failure.action.location)}: ` : '';
  let text = `ERROR: ${where}${failure.message}`;
  if (verboseFailures && failure.command) text += `\n${failure.command}`;
  text += '\n';
  for (const stream of [failure.stdout, failure.stderr]) {
    if (stream && stream.length > 0) {
      const s = stream.toString('utf8');
      text += s.endsWith('\n') ? s : `${s}\n`;
    }
  }
  text += `Target ${failure.action.owner} failed to build\n`;
  if (!verboseFailures && failure.command) text += 'Use --verbose_failures to see the command lines of failed build steps.\n';
  return text;
}

/** The bytes a successful action's process wrote. */
export interface ActionOutput {
  readonly stdout: Buffer;
  readonly stderr: Buffer;
}

/**
 * Bazel's block for the output of a successful action: `INFO: From <progress message>:` then what it
 * wrote, stderr before stdout as Bazel 4.2.3 prints them; undefined when `--output_filter` (matched
 * anywhere in the owner's label, as Bazel's RegexOutputFilter) hides it or there is nothing.
 */
export function formatActionOutput(action: Action, output: ActionOutput, outputFilter: RegExp | undefined): string | undefined {
  if (output.stdout.length === 0 && output.stderr.length === 0) return undefined;
  if (outputFilter && !outputFilter.test(action.owner)) return undefined;
  let text = `INFO: From ${action.progressMessage}:\n`;
  for (const stream of [output.stderr, output.stdout]) {
    if (stream.length === 0) continue;
    const s = stream.toString('utf8');
    text += s.endsWith('\n') ? s : `${s}\n`;
  }
  return text;
}

/** Bazel's `--subcommands` block for a spawn about to run. */
export function formatSubcommand(action: Action, command: string): string {
  return `SUBCOMMAND: # ${action.owner} [action '${action.progressMessage}', mnemonic: ${action.mnemonic}]\n${command}\n`;
}

/** A shell line that reproduces the spawn, as Bazel's --verbose_failures shows it. */
export function formatCommand(execRoot: string, env: Readonly<Record<string, string>>, argv: readonly string[]): string {
  const lines = [`  (cd ${shellQuote(execRoot)} && \\`, '  exec env - \\'];
  for (const name of Object.keys(env).sort()) lines.push(`    ${name}=${shellQuote(env[name]!)} \\`);
  lines.push(`  ${argv.map(shellQuote).join(' ')})`);
  return lines.join('\n');
}
