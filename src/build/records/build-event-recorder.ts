import { hostname } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildEventStream, failureDetails, timestampFromMs, durationFromMs } from '../../core/index.js';
import type { TestTarget } from '../../analysis/index.js';
import type { BuiltTarget } from '../build-graph.js';
import type { TestOutcome } from '../test-outcome.js';
import type { ActionRecord } from './action-records.js';
import type { BuildEventStream } from './build-event-stream.js';
import type { InvocationFacts } from './invocation.js';

type BuildEventInit = buildEventStream.BuildEventInit;
type BuildEventIdInit = buildEventStream.BuildEventIdInit;
type FileInit = buildEventStream.FileInit;
const { TestStatus, TestSize, Aborted_AbortReason: AbortReason } = buildEventStream;

/** The target configuration as the Build Event Protocol names it. */
export interface RecordedConfiguration {
  readonly id: string;
  readonly mnemonic: string;
  readonly cpu: string;
  readonly platformName: string;
  readonly makeVariables: Readonly<Record<string, string>>;
}

/** One attempt of one test run, as the test phase recorded it. */
export interface RecordedTestAttempt {
  readonly status: 'PASSED' | 'FAILED' | 'TIMEOUT' | 'FLAKY' | 'NO STATUS' | 'FAILED TO BUILD';
  readonly durationMs: number;
  readonly exitCode: number;
  readonly cached: boolean;
  readonly remote: boolean;
  /** Absolute paths of its log and XML (a retried attempt's moved under `test_attempts/`). */
  readonly logPath: string;
  readonly xmlPath: string;
  readonly startMs: number;
  readonly strategy: string;
}

/** A test run (shard, run) with its attempts in order. */
export interface RecordedTestRun {
  /** 0-based. */
  readonly shard?: number;
  readonly run: number;
  readonly attempts: readonly RecordedTestAttempt[];
}

/** How the build ended, for build_finished, build_metrics and build_tool_logs. */
export interface RecordedBuildEnd {
  readonly exitCode: number;
  /** The requested targets whose outputs were all built (the others failed or were not built). */
  readonly builtTargets: ReadonlySet<string>;
  /** Execution ran (otherwise announced targets are reported `aborted` with NO_BUILD). */
  readonly executed: boolean;
  readonly interrupted: boolean;
  /** Loading or analysis failed before anything was configured: the first error, which the pattern's `aborted` carries. */
  readonly loadingFailure?: string;
  readonly outcomes?: readonly TestOutcome[];
  readonly testRuns?: ReadonlyMap<string, readonly RecordedTestRun[]>;
  readonly metrics: { readonly actionsCreated: number; readonly actionsExecuted: number; readonly packagesLoaded: number; readonly targetsConfigured: number };
  /** build_tool_logs entries: `name` with inline contents or a file. */
  readonly toolLogs: readonly { readonly name: string; readonly contents?: string; readonly path?: string }[];
}

/** Bazel's exit code names (ExitCode.java) by number. */
const EXIT_CODE_NAMES: Readonly<Record<number, string>> = {
  0: 'SUCCESS',
  1: 'BUILD_FAILURE',
  2: 'COMMAND_LINE_ERROR',
  3: 'TESTS_FAILED',
  4: 'NO_TESTS_FOUND',
  7: 'ANALYSIS_FAILURE',
  8: 'INTERRUPTED',
  34: 'REMOTE_ERROR',
  36: 'LOCAL_ENVIRONMENTAL_ERROR',
  37: 'BLAZE_INTERNAL_ERROR',
  38: 'TRANSIENT_BUILD_EVENT_SERVICE_UPLOAD_ERROR',
  45: 'PERSISTENT_BUILD_EVENT_SERVICE_UPLOAD_ERROR',
};

/**
 * The build's facts as Build Event Protocol events, in the order and with the announcements
 * present-day Bazel posts them (BuildEventStreamer and the events of lib/buildeventstream): started
 * announcing the command lines, metadata, options, workspace status, the pattern and build_finished;
 * the pattern announcing each target_configured, which announces its target_completed; a test's
 * target_completed announcing its test_result attempts and test_summary; build_finished announcing
 * build_tool_logs and build_metrics. Events nobody announces (workspace, configuration, named sets,
 * actions) come through the stream's progress events.
 */
export class BuildEventRecorder {
  private configuration: RecordedConfiguration | undefined;
  /** Failed actions by the files they should have made: a target they broke names them as its root causes. */
  private readonly failedActions: { record: ActionRecord; id: BuildEventIdInit }[] = [];
  private targets: readonly BuiltTarget[] = [];
  private tests = new Map<string, TestTarget>();
  private namedSets = 0;

  constructor(
    private readonly stream: BuildEventStream,
    private readonly invocation: InvocationFacts,
    /** `--build_event_publish_all_actions`: every action, not only failed ones. */
    private readonly publishAllActions: boolean,
  ) {}

  /** Everything Bazel posts before loading: started, the command lines, metadata, options. */
  started(): void {
    const inv = this.invocation;
    const original = { structuredCommandLine: { commandLineLabel: 'original' } };
    const canonical = { structuredCommandLine: { commandLineLabel: 'canonical' } };
    const tool = { structuredCommandLine: { commandLineLabel: 'tool' } };
    this.stream.post({
      id: { started: {} },
      children: [
        { progress: {} },
        { unstructuredCommandLine: {} },
        original,
        canonical,
        tool,
        { buildMetadata: {} },
        { optionsParsed: {} },
        { workspaceStatus: {} },
        { pattern: { pattern: [...inv.patterns] } },
        { buildFinished: {} },
      ],
      started: {
        uuid: inv.invocationId,
        startTimeMillis: inv.startTimeMs,
        startTime: timestampFromMs(inv.startTimeMs),
        buildToolVersion: inv.toolVersion,
        optionsDescription: inv.commandLine.canonicalOptions.join(' '),
        command: inv.command,
        workingDirectory: inv.workingDirectory,
        workspaceDirectory: inv.workspaceDirectory,
        serverPid: process.pid,
      },
    });
    this.stream.post({ id: { unstructuredCommandLine: {} }, unstructuredCommandLine: { args: [inv.command, ...inv.commandLine.originalArgs] } });
    this.stream.post({ id: original, structuredCommandLine: commandLine('original', inv, inv.commandLine.explicitOptions) });
    this.stream.post({ id: canonical, structuredCommandLine: commandLine('canonical', inv, inv.commandLine.canonicalOptions) });
    this.stream.post({ id: tool, structuredCommandLine: {} });
    this.stream.post({ id: { buildMetadata: {} }, buildMetadata: {} });
    this.stream.post({
      id: { optionsParsed: {} },
      optionsParsed: {
        startupOptions: [...inv.commandLine.startupOptions],
        explicitStartupOptions: [...inv.commandLine.startupOptions],
        cmdLine: [...inv.commandLine.allOptions],
        explicitCmdLine: [...inv.commandLine.explicitOptions],
        invocationPolicy: {},
      },
    });
  }

  /** Stable and volatile keys, Bazel's first (BUILD_EMBED_LABEL, BUILD_HOST, BUILD_TIMESTAMP, BUILD_USER) then the command's, sorted by key. */
  workspaceStatus(values: { readonly stable: ReadonlyMap<string, string>; readonly volatile: ReadonlyMap<string, string> }): void {
    const items = [...values.stable, ...values.volatile].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, value]) => ({ key, value }));
    this.stream.post({ id: { workspaceStatus: {} }, workspaceStatus: { item: items } });
  }

  /** Loading and analysis are over: the pattern's targets, the workspace, the configuration, each target configured. */
  analyzed(targets: readonly BuiltTarget[], tests: readonly TestTarget[], configuration: RecordedConfiguration, execRoot: string): void {
    this.targets = targets;
    this.tests = new Map(tests.map((t) => [t.label, t]));
    this.configuration = configuration;
    this.stream.post({
      id: { pattern: { pattern: [...this.invocation.patterns] } },
      children: targets.map((t) => ({ targetConfigured: { label: t.label } })),
      expanded: {},
    });
    this.stream.post({ id: { workspace: {} }, workspaceInfo: { localExecRoot: execRoot } });
    this.stream.post({
      id: this.configurationId(),
      configuration: {
        mnemonic: configuration.mnemonic,
        platformName: configuration.platformName,
        cpu: configuration.cpu,
        makeVariable: { ...configuration.makeVariables },
      },
    });
    for (const t of targets) {
      const test = this.tests.get(t.label);
      this.stream.post({
        id: { targetConfigured: { label: t.label } },
        children: [this.completedId(t.label)],
        configured: {
          targetKind: t.targetKind ?? '',
          ...(test ? { testSize: testSizeOf(test.size), tag: [...test.tags] } : {}),
        },
      });
    }
  }

  /** An action ended: posted when it failed, or for every action with --build_event_publish_all_actions. */
  actionCompleted(record: ActionRecord, execRoot: string): void {
    const failed = record.failure !== undefined;
    if (!failed && !this.publishAllActions) return;
    const { action } = record;
    const primary = action.outputs[0]!.execPath;
    const id: BuildEventIdInit = {
      actionCompleted: { primaryOutput: primary, label: action.owner, ...(this.configuration ? { configuration: { id: this.configuration.id } } : {}) },
    };
    if (failed) this.failedActions.push({ record, id });
    this.stream.post({
      id,
      action: {
        success: !failed,
        type: action.mnemonic,
        exitCode: record.exitCode,
        label: action.owner,
        ...(this.configuration ? { configuration: { id: this.configuration.id } } : {}),
        primaryOutput: outputFile(primary, execRoot),
        commandLine: [...action.argv],
        startTime: timestampFromMs(record.startMs),
        endTime: timestampFromMs(record.endMs),
        ...(record.failure ? { failureDetail: spawnFailureDetail(record) } : {}),
      },
    });
  }

  /** Execution is over: each target's named set and completion, the tests' results and summaries, the end of the build. */
  finished(end: RecordedBuildEnd, execRoot: string, finishMs: number): void {
    if (end.executed) {
      for (const t of this.targets) this.targetCompleted(t, end, execRoot);
    }
    if (end.interrupted) this.abortUnposted(AbortReason.USER_INTERRUPTED);
    else if (end.loadingFailure !== undefined) this.abortUnposted(AbortReason.LOADING_FAILURE, end.loadingFailure);
    else this.abortUnposted(end.executed ? AbortReason.INCOMPLETE : AbortReason.NO_BUILD);
    this.stream.post({
      id: { buildFinished: {} },
      children: [{ buildToolLogs: {} }, { buildMetrics: {} }],
      finished: {
        overallSuccess: end.exitCode === 0,
        exitCode: { name: EXIT_CODE_NAMES[end.exitCode] ?? 'BUILD_FAILURE', code: end.exitCode },
        finishTimeMillis: finishMs,
        finishTime: timestampFromMs(finishMs),
        anomalyReport: {},
      },
    });
    this.stream.post({
      id: { buildMetrics: {} },
      buildMetrics: {
        actionSummary: { actionsCreated: end.metrics.actionsCreated, actionsExecuted: end.metrics.actionsExecuted },
        targetMetrics: { targetsConfigured: end.metrics.targetsConfigured },
        packageMetrics: { packagesLoaded: end.metrics.packagesLoaded },
        timingMetrics: { wallTimeInMs: finishMs - this.invocation.startTimeMs },
      },
    });
    this.stream.post({
      id: { buildToolLogs: {} },
      buildToolLogs: {
        log: end.toolLogs.map((l) =>
          l.path !== undefined ? { name: l.name, uri: pathToFileURL(l.path).href } : { name: l.name, contents: Buffer.from(l.contents ?? '') },
        ),
      },
    });
  }

  private targetCompleted(t: BuiltTarget, end: RecordedBuildEnd, execRoot: string): void {
    const success = end.builtTargets.has(t.label);
    const test = this.tests.get(t.label);
    const runs = end.testRuns?.get(t.label) ?? [];
    // As Bazel: a failed target announces the failed actions among its own as its root causes.
    const rootCauses = success
      ? []
      : this.failedActions.filter((f) => f.record.action.owner === t.label || f.record.action.outputs.some((o) => t.files.includes(o.execPath)));
    const children: BuildEventIdInit[] = rootCauses.map((f) => f.id);
    if (test && success) {
      // As Bazel: the target announces each run's first attempt, and an attempt tried again announces the next.
      for (const run of runs) if (run.attempts.length > 0) children.push(this.testResultId(t.label, run, 0));
      children.push({ testSummary: { label: t.label, configuration: { id: this.configuration!.id } } });
    }
    let fileSets: { id: string }[] = [];
    if (success && t.files.length > 0) {
      const id = String(this.namedSets++);
      this.stream.post({ id: { namedSet: { id } }, namedSetOfFiles: { files: t.files.map((f) => outputFile(f, execRoot)) } });
      fileSets = [{ id }];
    }
    this.stream.post({
      id: this.completedId(t.label),
      children,
      completed: success
        ? {
            success: true,
            outputGroup: [{ name: 'default', fileSets }],
            ...(test ? { testTimeoutSeconds: test.timeoutSeconds, testTimeout: durationFromMs(test.timeoutSeconds * 1000) } : {}),
          }
        : { success: false, failureDetail: rootCauses[0] ? spawnFailureDetail(rootCauses[0].record) : { message: `building ${t.label} failed` } },
    });
    if (!test || !success) return;
    for (const run of runs) {
      run.attempts.forEach((attempt, i) => {
        this.stream.post({
          id: this.testResultId(t.label, run, i),
          children: i + 1 < run.attempts.length ? [this.testResultId(t.label, run, i + 1)] : [],
          testResult: {
            status: testStatusOf(attempt.status),
            cachedLocally: attempt.cached && !attempt.remote,
            testAttemptStartMillisEpoch: attempt.startMs,
            testAttemptStart: timestampFromMs(attempt.startMs),
            testAttemptDurationMillis: attempt.durationMs,
            testAttemptDuration: durationFromMs(attempt.durationMs),
            testActionOutput: [
              { name: 'test.log', uri: pathToFileURL(attempt.logPath).href },
              { name: 'test.xml', uri: pathToFileURL(attempt.xmlPath).href },
            ],
            executionInfo: {
              strategy: attempt.strategy,
              cachedRemotely: attempt.cached && attempt.remote,
              exitCode: attempt.exitCode,
              hostname: hostname(),
              timeoutSeconds: test.timeoutSeconds,
            },
          },
        });
      });
    }
    const outcome = end.outcomes?.find((o) => o.label === t.label);
    const attempts = runs.flatMap((r) => r.attempts);
    const finals = runs.map((r) => r.attempts[r.attempts.length - 1]).filter((a) => a !== undefined);
    const starts = attempts.map((a) => a.startMs);
    const stops = attempts.map((a) => a.startMs + a.durationMs);
    const totalMs = attempts.reduce((sum, a) => sum + a.durationMs, 0);
    const fileOf = (a: RecordedTestAttempt): FileInit => ({ name: 'test.log', uri: pathToFileURL(a.logPath).href });
    this.stream.post({
      id: { testSummary: { label: t.label, configuration: { id: this.configuration!.id } } },
      testSummary: {
        overallStatus: testStatusOf(outcome?.status ?? 'NO STATUS'),
        totalRunCount: attempts.length,
        runCount: Math.max(1, ...runs.map((r) => r.run + 1)),
        attemptCount: Math.max(1, ...runs.map((r) => r.attempts.length)),
        // 0 for a test without shards, as Bazel reports it.
        shardCount: test.shardCount,
        passed: finals.filter((a) => a.status === 'PASSED').map(fileOf),
        failed: attempts.filter((a) => a.status !== 'PASSED').map(fileOf),
        totalNumCached: finals.filter((a) => a.cached).length,
        ...(starts.length > 0
          ? {
              firstStartTimeMillis: Math.min(...starts),
              firstStartTime: timestampFromMs(Math.min(...starts)),
              lastStopTimeMillis: Math.max(...stops),
              lastStopTime: timestampFromMs(Math.max(...stops)),
            }
          : {}),
        totalRunDurationMillis: totalMs,
        totalRunDuration: durationFromMs(totalMs),
      },
    });
  }

  /**
   * As Bazel's streamer when the build ends: every event announced but never posted (a target
   * that was not built, a test that never ran) is posted as `aborted`, so that no reader waits for it.
   */
  private abortUnposted(reason: buildEventStream.Aborted_AbortReason, description = ''): void {
    for (const id of this.stream.pending()) {
      // The end of the build is still to come, and progress events are the stream's own.
      if (id.progress || id.buildFinished || id.buildMetrics || id.buildToolLogs) continue;
      this.stream.post({ id, aborted: { reason, description } });
    }
  }

  private configurationId(): BuildEventIdInit {
    return { configuration: { id: this.configuration!.id } };
  }

  private completedId(label: string): BuildEventIdInit {
    return { targetCompleted: { label, configuration: { id: this.configuration!.id } } };
  }

  /** Bazel numbers runs, shards and attempts from 1. */
  private testResultId(label: string, run: RecordedTestRun, attempt: number): BuildEventIdInit {
    return { testResult: { label, run: run.run + 1, shard: (run.shard ?? 0) + 1, attempt: attempt + 1, configuration: { id: this.configuration!.id } } };
  }
}

function commandLine(label: string, inv: InvocationFacts, options: readonly string[]): buildEventStream.BuildEventInit['structuredCommandLine'] {
  const optionList = (forms: readonly string[]) => ({ option: forms.map(optionOf) });
  return {
    commandLineLabel: label,
    sections: [
      { sectionLabel: 'executable', chunkList: { chunk: [inv.executable] } },
      { sectionLabel: 'startup options', optionList: optionList(inv.commandLine.startupOptions) },
      { sectionLabel: 'command', chunkList: { chunk: [inv.command] } },
      { sectionLabel: 'command options', optionList: optionList(options) },
      { sectionLabel: 'residual', chunkList: { chunk: [...inv.patterns] } },
    ],
  };
}

/** `--name=value` as command_line.Option: the combined form, the name and the value. */
function optionOf(form: string): { combinedForm: string; optionName: string; optionValue: string } {
  const body = form.replace(/^--?/, '');
  const eq = body.indexOf('=');
  if (eq >= 0) return { combinedForm: form, optionName: body.slice(0, eq), optionValue: body.slice(eq + 1) };
  // A boolean's `--name` and `--noname`.
  return { combinedForm: form, optionName: body, optionValue: '' };
}

/** A file under the execroot as the protocol names it: its path below the output directory, a file:// URI, the prefix. */
function outputFile(execPath: string, execRoot: string): FileInit {
  const parts = execPath.split('/');
  // bazel-out/<config>/bin/<path>: the prefix is the first three parts, as Bazel's path_prefix.
  const derived = parts[0] === 'bazel-out' && parts.length > 3;
  return {
    name: derived ? parts.slice(3).join('/') : execPath,
    uri: pathToFileURL(join(execRoot, execPath)).href,
    ...(derived ? { pathPrefix: parts.slice(0, 3) } : {}),
  };
}

/** A failed spawn's FailureDetail: its message and Bazel's spawn code with the exit code. */
function spawnFailureDetail(record: ActionRecord): failureDetails.FailureDetailInit {
  const code = record.timedOut
    ? failureDetails.Spawn_Code.TIMEOUT
    : record.exitCode !== 0
      ? failureDetails.Spawn_Code.NON_ZERO_EXIT
      : failureDetails.Spawn_Code.EXECUTION_FAILED;
  return { message: record.failure?.message ?? '', spawn: { code, spawnExitCode: record.exitCode } };
}

function testStatusOf(status: RecordedTestAttempt['status']): buildEventStream.TestStatus {
  switch (status) {
    case 'PASSED':
      return TestStatus.PASSED;
    case 'FLAKY':
      return TestStatus.FLAKY;
    case 'FAILED':
      return TestStatus.FAILED;
    case 'TIMEOUT':
      return TestStatus.TIMEOUT;
    case 'FAILED TO BUILD':
      return TestStatus.FAILED_TO_BUILD;
    case 'NO STATUS':
      return TestStatus.NO_STATUS;
  }
}

function testSizeOf(size: string): buildEventStream.TestSize {
  switch (size) {
    case 'small':
      return TestSize.SMALL;
    case 'medium':
      return TestSize.MEDIUM;
    case 'large':
      return TestSize.LARGE;
    case 'enormous':
      return TestSize.ENORMOUS;
    default:
      return TestSize.UNKNOWN;
  }
}

export type { BuildEventInit };
