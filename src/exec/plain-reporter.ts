import type { Action } from '../analysis/index.js';
import {
  formatCompletion,
  formatFailure,
  formatProcessSummary,
  formatSubcommand,
  type ActionFailure,
  type ExecutionReporter,
  type ExecutionSummary,
  type ProcessKind,
} from './execution-reporter.js';

export interface TextSink {
  write(text: string): void;
}

/** Progress as plain lines, for logs and pipes: one `[done / total] message` line per started action. */
export class PlainReporter implements ExecutionReporter {
  private total = 0;
  private done = 0;

  constructor(
    private readonly out: TextSink,
    private readonly options: { verboseFailures?: boolean; subcommands?: boolean } = {},
  ) {}

  buildStarted(totalActions: number): void {
    this.total = totalActions;
  }

  actionStarted(action: Action, _runnerName: string, command: string): void {
    if (this.options.subcommands) this.out.write(formatSubcommand(action, command));
    this.out.write(`[${this.done} / ${this.total}] ${action.progressMessage}\n`);
  }

  actionFinished(_action: Action, _kind: ProcessKind | undefined): void {
    this.done++;
  }

  actionFailed(failure: ActionFailure): void {
    this.done++;
    this.out.write(formatFailure(failure, this.options.verboseFailures ?? false));
  }

  warning(message: string): void {
    this.out.write(`WARNING: ${message}\n`);
  }

  buildFinished(summary: ExecutionSummary): void {
    this.out.write(`${formatProcessSummary(summary.processes)}\n`);
    for (const line of formatCompletion(summary)) this.out.write(`${line}\n`);
  }
}
