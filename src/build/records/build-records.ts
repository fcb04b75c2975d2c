import { resolve, join } from 'node:path';
import type { BuildOptions, TestTarget } from '../../analysis/index.js';
import { ExitCode } from '../../core/index.js';
import type { BesUploadFailure, BuildEventServiceTransport } from './build-event-service.js';
import type { ExecutionReporter } from '../../exec/index.js';
import type { BuiltTarget } from '../build-graph.js';
import type { TestOutcome } from '../test-outcome.js';
import { ActionRecorder, type ActionRecord } from './action-records.js';
import { BuildEventFile } from './build-event-files.js';
import { BuildEventRecorder, type RecordedConfiguration, type RecordedTestRun } from './build-event-recorder.js';
import { BuildEventStream, type BuildEventTransport } from './build-event-stream.js';
import { FileDigests, sortSpawns, spawnExecOf, writeCompactExecutionLog, writeExecutionLog } from './execution-log.js';
import { invocationIdFrom, type InvocationFacts, type RecordedCommandLine } from './invocation.js';
import { criticalPath, TraceProfileRecorder, writeTraceProfile, type ProfilePhase } from './trace-profile.js';

/** What the command line knows of the invocation that the build's records report. */
export interface RecordsRequest {
  readonly command: string;
  readonly options: BuildOptions;
  readonly patterns: readonly string[];
  readonly cwd: string;
  readonly workspaceRoot: string;
  /** The main repository's name (the runfiles directory of the workspace); `__main__` when empty. */
  readonly workspaceName: string;
  readonly outputBase: string;
  readonly toolVersion: string;
  /** Milliseconds since the epoch when the command started. */
  readonly startTimeMs: number;
  readonly commandLine: RecordedCommandLine;
  /** `--bes_backend`'s transport, opened by `openBuildRecords` (its module loads gRPC, so only when asked for). */
  readonly bes?: BuildEventServiceTransport;
}

/** What analysis handed over, for the records. */
export interface RecordedAnalysis {
  readonly targets: readonly BuiltTarget[];
  readonly tests: readonly TestTarget[];
  readonly configuration: RecordedConfiguration;
  readonly execRoot: string;
  readonly actionsCreated: number;
  readonly packagesLoaded: number;
  readonly targetsConfigured: number;
}

/** What execution handed over at the end. */
export interface RecordedExecution {
  readonly builtTargets: ReadonlySet<string>;
  readonly outcomes?: readonly TestOutcome[];
  readonly testRuns?: ReadonlyMap<string, readonly RecordedTestRun[]>;
  readonly baseEnvironment: Readonly<Record<string, string>>;
}

/**
 * The build's own records, as Bazel keeps them: the Build Event Protocol stream
 * (`--build_event_json_file`, `--build_event_binary_file`, `--build_event_text_file`, and any
 * other transport such as the Build Event Service), the JSON trace profile (`--profile`, or
 * `command.profile.gz` in the output base while `--generate_json_trace_profile` is on) and the
 * execution log (`--execution_log_json_file`, `--execution_log_binary_file`). The build tool tells
 * it what happens; it decides what each record says.
 */
export class BuildRecords {
  readonly invocation: InvocationFacts;
  private readonly stream: BuildEventStream | undefined;
  private readonly events: BuildEventRecorder | undefined;
  private readonly profiler: TraceProfileRecorder | undefined;
  private readonly profilePath: string | undefined;
  private readonly actions: ActionRecord[] = [];
  private analysis: RecordedAnalysis | undefined;
  private execution: RecordedExecution | undefined;
  private finished = false;
  private firstError: string | undefined;
  private readonly bes: BuildEventServiceTransport | undefined;
  /** `--bes_results_url`: where the invocation can be seen (`INFO: Streaming build results to: ...`). */
  readonly resultsUrl: string | undefined;

  /** Opens every file the flags name; throws UsageError for a bad flag or a file that cannot be created. */
  constructor(
    private readonly request: RecordsRequest,
    readonly ids: { readonly invocationId: string; readonly buildRequestId: string } = invocationIdsOf(request.options),
  ) {
    const { options } = request;
    this.invocation = {
      invocationId: ids.invocationId,
      buildRequestId: ids.buildRequestId,
      command: request.command,
      executable: 'kiln',
      toolVersion: request.toolVersion,
      startTimeMs: request.startTimeMs,
      workingDirectory: request.cwd,
      workspaceDirectory: request.workspaceRoot,
      patterns: request.patterns,
      commandLine: request.commandLine,
    };
    const transports: BuildEventTransport[] = [];
    for (const format of ['json', 'binary', 'text'] as const) {
      const path = options.getString(`build_event_${format}_file`);
      if (path !== '') transports.push(new BuildEventFile(resolve(request.cwd, path), format));
    }
    this.bes = request.bes;
    if (this.bes) transports.push(this.bes);
    const resultsUrl = options.getString('bes_results_url');
    this.resultsUrl = resultsUrl === '' ? undefined : `${resultsUrl.replace(/\/+$/, '')}/${this.invocation.invocationId}`;
    if (transports.length > 0) {
      this.stream = new BuildEventStream(transports);
      this.events = new BuildEventRecorder(this.stream, this.invocation, options.getBool('build_event_publish_all_actions'));
    }
    const profile = options.getString('profile');
    if (profile !== '') this.profilePath = resolve(request.cwd, profile);
    else if (options.getBool('generate_json_trace_profile')) this.profilePath = join(request.outputBase, 'command.profile.gz');
    if (this.profilePath) {
      this.profiler = new TraceProfileRecorder(request.startTimeMs, { buildId: this.invocation.invocationId, outputBase: request.outputBase });
      this.profiler.phase('Launch Blaze', request.startTimeMs);
      this.profiler.phase('Initialize command');
    }
  }

  /** A Build Event Protocol stream is written or sent (it needs the analysed graph, every target and file). */
  get streamsEvents(): boolean {
    return this.stream !== undefined;
  }

  /** The start of the stream: started, the command lines, the options. */
  started(): void {
    this.events?.started();
  }

  /** An error the command reported (the first one says why a build that configured nothing failed). */
  error(message: string): void {
    this.firstError ??= message;
  }

  phase(phase: ProfilePhase): void {
    this.profiler?.phase(phase);
  }

  workspaceStatus(values: { readonly stable: ReadonlyMap<string, string>; readonly volatile: ReadonlyMap<string, string> }): void {
    this.events?.workspaceStatus(values);
  }

  analyzed(analysis: RecordedAnalysis): void {
    this.analysis = analysis;
    this.events?.analyzed(analysis.targets, analysis.tests, analysis.configuration, analysis.execRoot);
  }

  /** The execution reporter that records each action for the profile, the log and the stream. */
  reporter(inner: ExecutionReporter): ExecutionReporter {
    const execRoot = this.analysis?.execRoot ?? '';
    return new ActionRecorder(inner, (record) => {
      this.actions.push(record);
      this.events?.actionCompleted(record, execRoot);
    });
  }

  /** The attempts of an action (tests: one per attempt, in order). */
  recordsOf(action: unknown): readonly ActionRecord[] {
    return this.actions.filter((r) => r.action === action);
  }

  executed(execution: RecordedExecution): void {
    this.execution = execution;
  }

  /** Writes what is left (the end of the stream, the profile, the execution log); called once, whatever the outcome. */
  async finish(exitCode: number): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    const endMs = Date.now();
    this.profiler?.phase('Complete build', endMs);
    if (this.profiler && this.profilePath) writeTraceProfile(this.profilePath, this.profiler.profile(this.actions, endMs));
    this.writeExecutionLogs();
    if (!this.events || !this.stream) return;
    const path = criticalPath(this.actions);
    const seconds = (ms: number) => (ms / 1000).toFixed(2);
    const critical = path.reduce((sum, r) => sum + (r.endMs - r.startMs), 0);
    const toolLogs = [
      { name: 'elapsed time', contents: seconds(endMs - this.request.startTimeMs) },
      {
        name: 'critical path',
        contents: [`Critical Path: ${seconds(critical)}s`, ...path.map((r) => `  ${seconds(r.endMs - r.startMs)}s action '${r.action.progressMessage}'`)].join(
          '\n',
        ),
      },
      { name: 'process stats', contents: `${this.actions.length} process${this.actions.length === 1 ? '' : 'es'}.` },
      ...(this.profilePath ? [{ name: this.profilePath.split('/').pop()!, path: this.profilePath }] : []),
    ];
    const analysis = this.analysis;
    this.events.finished(
      {
        exitCode,
        builtTargets: this.execution?.builtTargets ?? new Set(),
        executed: this.execution !== undefined,
        interrupted: exitCode === ExitCode.INTERRUPTED,
        ...(analysis === undefined && exitCode !== ExitCode.SUCCESS && this.firstError !== undefined ? { loadingFailure: this.firstError } : {}),
        ...(this.execution?.outcomes ? { outcomes: this.execution.outcomes } : {}),
        ...(this.execution?.testRuns ? { testRuns: this.execution.testRuns } : {}),
        metrics: {
          actionsCreated: analysis?.actionsCreated ?? 0,
          actionsExecuted: this.actions.length,
          packagesLoaded: analysis?.packagesLoaded ?? 0,
          targetsConfigured: analysis?.targetsConfigured ?? 0,
        },
        toolLogs,
      },
      analysis?.execRoot ?? '',
      endMs,
    );
    await this.stream.close(exitCode);
  }

  /** Why the Build Event Service upload failed, once `finish` has resolved. */
  get besFailure(): BesUploadFailure | undefined {
    return this.bes?.failure;
  }

  private writeExecutionLogs(): void {
    const { options, cwd } = this.request;
    const json = options.getString('execution_log_json_file');
    const binary = options.getString('execution_log_binary_file');
    const compact = options.getString('execution_log_compact_file');
    if (json === '' && binary === '' && compact === '') return;
    const execRoot = this.analysis?.execRoot ?? '';
    const digests = new FileDigests();
    const context = { execRoot, baseEnvironment: this.execution?.baseEnvironment ?? {} };
    if (compact !== '') {
      const workspaceRunfilesDirectory = this.request.workspaceName || '__main__';
      writeCompactExecutionLog(
        resolve(cwd, compact),
        this.actions,
        { ...context, invocationId: this.invocation.invocationId, workspaceRunfilesDirectory },
        digests,
      );
    }
    const logged = this.actions.flatMap((r) => spawnExecOf(r, context, digests) ?? []);
    const spawns = options.getBool('execution_log_sort') ? sortSpawns(logged) : logged;
    if (json !== '') writeExecutionLog(resolve(cwd, json), 'json', spawns);
    if (binary !== '') writeExecutionLog(resolve(cwd, binary), 'binary', spawns);
  }
}

/** `--invocation_id` and `--build_request_id`, or fresh UUIDs; throws UsageError. */
export function invocationIdsOf(options: BuildOptions): { invocationId: string; buildRequestId: string } {
  return {
    invocationId: invocationIdFrom('invocation_id', options.getString('invocation_id')),
    buildRequestId: invocationIdFrom('build_request_id', options.getString('build_request_id')),
  };
}

/**
 * The build's records for `request`, with the Build Event Service transport when `--bes_backend`
 * names one (its module, and gRPC with it, is loaded only then); throws UsageError.
 */
export async function openBuildRecords(request: Omit<RecordsRequest, 'bes'>): Promise<BuildRecords> {
  const ids = invocationIdsOf(request.options);
  if (request.options.getString('bes_backend') === '') return new BuildRecords(request, ids);
  const { openBuildEventServiceTransport } = await import('./build-event-service.js');
  return new BuildRecords({ ...request, bes: openBuildEventServiceTransport(request.options, request.cwd, ids) }, ids);
}
