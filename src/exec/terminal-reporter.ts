import type { Action } from '../actions/index.js';
import { systemClock, type Clock } from '../core/index.js';
import {
  formatActionOutput,
  formatClosing,
  formatFailure,
  type ActionOutput,
  formatSubcommand,
  type ActionFailure,
  type ClosingOptions,
  type ExecutionReporter,
  type ExecutionSummary,
  type ProcessKind,
} from './execution-reporter.js';
import type { TextSink } from './plain-reporter.js';

export interface TerminalReporterOptions extends ClosingOptions {
  readonly verboseFailures?: boolean;
  /** `--subcommands`: print each command before it runs. */
  readonly subcommands?: boolean;
  /** `--output_filter`: only the output of actions whose owner's label it matches is printed. */
  readonly outputFilter?: RegExp;
  /** Measures elapsed times; injectable so tests control them. */
  readonly clock?: Clock;
  /** Redraw period for the elapsed times; 0 disables the timer (tests redraw on events only). */
  readonly refreshMs?: number;
  /** Least time between two redraws caused by events (the timer and printed messages always redraw). */
  readonly minRedrawMs?: number;
  /** `--show_progress_rate_limit`: overrides minRedrawMs. */
  readonly progressRateLimitMs?: number;
  /** Terminal width; status lines are cut to it. */
  readonly columns?: number;
  /** Running actions listed under the status line. */
  readonly maxRunningLines?: number;
}

interface Running {
  readonly action: Action;
  readonly runnerName: string;
  readonly startedAt: number;
}

const CLEAR_TO_END = '\x1b[J';

/**
 * Bazel's live status on a terminal: messages scroll above a status block that is redrawn in place,
 *   [12 / 40] Executing genrule //pkg:a; 3s linux-sandbox ... (2 actions running)
 *       Executing genrule //pkg:b; 1s linux-sandbox
 * with the oldest running action first and the build's elapsed time when nothing runs.
 */
export class TerminalReporter implements ExecutionReporter {
  private total = 0;
  private done = 0;
  private readonly running = new Map<Action, Running>();
  private drawnLines = 0;
  private lastDrawAt = Number.NEGATIVE_INFINITY;
  private readonly now: () => number;
  private readonly startedAt: number;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly out: TextSink,
    private readonly options: TerminalReporterOptions = {},
  ) {
    this.now = () => (options.clock ?? systemClock).now();
    this.startedAt = this.now();
  }

  buildStarted(totalActions: number): void {
    this.total = totalActions;
    const period = this.options.refreshMs ?? 1000;
    if (period > 0) {
      this.timer = setInterval(() => this.redraw(), period);
      this.timer.unref();
    }
    this.redraw();
  }

  actionStarted(action: Action, runnerName: string, command: string): void {
    this.running.set(action, { action, runnerName, startedAt: this.now() });
    if (this.options.subcommands) this.print(formatSubcommand(action, command));
    else this.redrawSoon();
  }

  actionFinished(action: Action, _kind: ProcessKind | undefined): void {
    this.running.delete(action);
    this.done++;
    this.redrawSoon();
  }

  actionFailed(failure: ActionFailure): void {
    this.running.delete(failure.action);
    this.done++;
    this.print(formatFailure(failure, this.options.verboseFailures ?? false));
  }

  actionOutput(action: Action, output: ActionOutput): void {
    const text = formatActionOutput(action, output, this.options.outputFilter);
    if (text !== undefined) this.print(text);
  }

  warning(message: string): void {
    this.print(`WARNING: ${message}\n`);
  }

  buildFinished(summary: ExecutionSummary): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.erase();
    this.out.write(formatClosing(summary, this.options));
  }

  interject(write: () => void): void {
    this.erase();
    write();
    this.draw();
  }

  /** The status block as lines, without escape codes (also what tests check). */
  statusLines(): string[] {
    const now = this.now();
    const head = `[${this.done} / ${this.total}]`;
    const runs = [...this.running.values()].sort((a, b) => a.startedAt - b.startedAt);
    const describe = (r: Running) => `${r.action.progressMessage}; ${seconds(now - r.startedAt)} ${r.runnerName}`;
    if (runs.length === 0) return [`${head} checking cached actions; ${seconds(now - this.startedAt)}`];
    const more = runs.length > 1 ? ` ... (${runs.length} actions running)` : '';
    const lines = [`${head} ${describe(runs[0]!)}${more}`];
    for (const r of runs.slice(1, 1 + (this.options.maxRunningLines ?? 3))) lines.push(`    ${describe(r)}`);
    const width = this.options.columns ?? 80;
    return lines.map((l) => (l.length > width ? `${l.slice(0, width - 1)}…` : l));
  }

  private print(text: string): void {
    this.erase();
    this.out.write(text);
    this.draw();
  }

  /** Thousands of short actions must not flood the terminal: events redraw at most every minRedrawMs. */
  private redrawSoon(): void {
    if (this.now() - this.lastDrawAt >= (this.options.progressRateLimitMs ?? this.options.minRedrawMs ?? 100)) this.redraw();
  }

  private redraw(): void {
    this.erase();
    this.draw();
  }

  private erase(): void {
    if (this.drawnLines > 0) this.out.write(`\r\x1b[${this.drawnLines}A${CLEAR_TO_END}`);
    this.drawnLines = 0;
  }

  private draw(): void {
    const lines = this.statusLines();
    this.out.write(`${lines.join('\n')}\n`);
    this.drawnLines = lines.length;
    this.lastDrawAt = this.now();
  }
}

function seconds(ms: number): string {
  return `${Math.max(0, Math.floor(ms / 1000))}s`;
}
