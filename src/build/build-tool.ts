import { resolve } from 'node:path';
import type { Action } from '../actions/index.js';
import type { BuildOptions, OutputDirectories, TestSettings, TestTarget } from '../analysis/index.js';
import { ExitCode, isKilnError, UsageError, type Position } from '../core/index.js';
import {
  ActionSpawners,
  buildActionEnvironment,
  executeActions,
  mayUseSandbox,
  OUTPUT_DIR_NAME,
  failedActionsExitCode,
  parseMnemonicStrategy,
  parseDynamicStrategies,
  parseStrategyList,
  prepareExecRoot,
  PROCESS_KIND_ORDER,
  type ExecutionOptions,
  type ExecutionSummary,
  type RemoteExecutionOptions,
  type StrategyFlags,
} from '../exec/index.js';
import { remoteExecutionOptions } from './remote-options.js';
import { analyzeBuild, analyzedEvent, buildGraphKeyOf, type AnalyzedBuild } from './analysis-phase.js';
import type { BuiltTarget } from './build-graph.js';
import type { BuildUi, ClosingReport, ReporterFlags } from './events.js';
import { filesUnchanged, nullBuildKey, NullBuildRecords, type NullBuildRecord } from './null-build-record.js';
import { lockOutputBase, updateConvenienceSymlinks, type ConvenienceSymlinkOptions } from './workspace/index.js';
import { whyDirectoryIsUnusable } from './workspace/index.js';
import type { WorkspaceContext } from './workspace/index.js';
import { clearAttemptLogs, localTestStrategies, retryFailedRuns, STREAMED_OUTPUT_WARNING, testOutcomes, withInheritedEnv } from './test-phase.js';
import type { TestOutcome } from './test-outcome.js';
import { runWorkspaceStatusCommand, type CustomWorkspaceStatus } from './workspace-status-command.js';
import { TestRunReporter, type TestOutputMode } from './test-run-reporter.js';
import { flakyAttemptsFrom, runUnderWords, testSettingsFrom } from './test-settings.js';
import { workspaceStatusValues } from './workspace-status-command.js';
import { builtTargetsOf, openBuildRecords, testRunsOf, type BuildRecords, type RecordedCommandLine } from './records/index.js';

/** One `kiln build`, `kiln test` or the build half of `kiln run`, as the command line asks for it. */
export interface BuildRequest {
  readonly command: 'build' | 'run' | 'test';
  readonly workspace: WorkspaceContext;
  /** Every option, rc files' and the command line's, parsed. */
  readonly options: BuildOptions;
  readonly patterns: readonly string[];
  /** The client's working directory and environment (relative flag paths, PATH, --test_env, credential helpers). */
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Kiln's version, sent to remote servers. */
  readonly toolVersion: string;
  /** `performance.now()` when the command started (the elapsed time of the closing lines). */
  readonly startedAt: number;
  /** Resolves when the user interrupts: actions are killed and the build stops. */
  readonly interrupted?: Promise<void>;
  /**
   * Runs loading and analysis (synchronous Starlark code that may never return) so that an
   * interrupt still ends it: `interrupted` when it did.
   */
  readonly interruptibly: <T>(work: () => T) => { readonly value: T } | 'interrupted';
  /** The command line as typed and as expanded, for the build's records (Build Event Protocol); the options' canonical forms when absent. */
  readonly commandLine?: RecordedCommandLine;
  /** Milliseconds since the epoch when the command started (the records' times); now when absent. */
  readonly startTimeMs?: number;
}

/** What a finished build hands back: its exit code, the requested targets and, for `kiln test`, the tests' outcomes. */
export interface BuildResult {
  readonly exitCode: number;
  readonly targets: readonly BuiltTarget[];
  readonly outputDirectories?: OutputDirectories;
  /** `kiln test` that got to run its tests: each test and its outcome (the summary's lines). */
  readonly tests?: { readonly targets: readonly TestTarget[]; readonly outcomes: readonly TestOutcome[] };
}

/**
 * The build tool (Bazel's BuildTool): a `kiln build` (and the build half of `kiln run`; `kiln test`
 * also runs the tests and retries flaky ones): target patterns, loading, analysis, execution of the
 * actions the requested targets' default outputs need, convenience symlinks. Reports through `ui`
 * as it goes; never throws for user errors.
 */
export async function runBuild(request: BuildRequest, ui: BuildUi): Promise<BuildResult> {
  let records: BuildRecords;
  try {
    records = await openRecords(request);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    ui.event({ kind: 'error', message: e.message });
    return { exitCode: ExitCode.COMMAND_LINE_ERROR, targets: [] };
  }
  if (records.resultsUrl) ui.event({ kind: 'info', message: `Streaming build results to: ${records.resultsUrl}` });
  records.started();
  const spawners = new ActionSpawners(request.env);
  const onExit: (() => void)[] = [];
  let exitCode: number = ExitCode.INTERNAL_ERROR;
  let result: BuildResult;
  try {
    result = await buildWith(request, ui, spawners, onExit, records);
    exitCode = result.exitCode;
  } finally {
    await records.finish(exitCode);
    for (const close of onExit) close();
    await spawners.close();
  }
  if (records.resultsUrl) ui.event({ kind: 'info', message: `Streaming build results to: ${records.resultsUrl}` });
  const besFailure = records.besFailure;
  if (!besFailure) return result;
  // As present-day Bazel (--bes_upload_mode=wait_for_upload_complete): the upload's failure is the command's exit code.
  ui.event({
    kind: 'error',
    message: besFailure.timedOut ? 'The Build Event Protocol upload timed out.' : `The Build Event Protocol upload failed: ${besFailure.message}`,
  });
  return { ...result, exitCode: besFailure.transient ? ExitCode.BES_TRANSIENT_UPLOAD_ERROR : ExitCode.BES_PERSISTENT_UPLOAD_ERROR };
}

/** The build's records (Build Event Protocol, profile, execution log) as the flags ask; throws UsageError. */
function openRecords(request: BuildRequest): Promise<BuildRecords> {
  const { options } = request;
  const canonical = options.canonicalForms();
  return openBuildRecords({
    command: request.command,
    options,
    patterns: request.patterns,
    cwd: request.cwd,
    workspaceRoot: request.workspace.workspace.root,
    workspaceName: request.workspace.workspace.name,
    outputBase: request.workspace.layout.outputBase,
    toolVersion: request.toolVersion,
    startTimeMs: request.startTimeMs ?? Date.now(),
    commandLine: request.commandLine ?? {
      originalArgs: canonical,
      explicitOptions: canonical,
      allOptions: canonical,
      canonicalOptions: canonical,
      startupOptions: [],
    },
  });
}

async function buildWith(request: BuildRequest, ui: BuildUi, spawners: ActionSpawners, onExit: (() => void)[], records: BuildRecords): Promise<BuildResult> {
  const { command, options, patterns, startedAt, workspace: ctx } = request;
  let analyzedCounts: { packagesLoaded: number; targetsConfigured: number } | undefined;
  const events: BuildUi['event'] = (event) => {
    if (event.kind === 'analyzed') analyzedCounts = event;
    if (event.kind === 'error') records.error(event.message);
    ui.event(event);
  };
  const printError = (message: string, pos?: Position) => events({ kind: 'error', message, ...(pos ? { pos } : {}) });
  const fail = (exitCode: number): BuildResult => ({ exitCode, targets: [] });
  let strategies: StrategyFlags;
  let remote: RemoteExecutionOptions | undefined;
  let testSettings: TestSettings | undefined;
  let attemptsFor: (flaky: boolean) => number = () => 1;
  let reporting: ReporterFlags;
  try {
    strategies = strategyFlags(options);
    remote = await remoteExecutionOptions(options, request.cwd, request.toolVersion, {
      workspace: ctx.workspace.root,
      env: request.env,
      warn: (message) => events({ kind: 'warning', message }),
    });
    checkExecutionDirectories(options, request.cwd);
    if (command === 'test') {
      testSettings = testSettingsFrom(options, request.env, ctx.workspace.name);
      attemptsFor = flakyAttemptsFrom(options);
      if (options.getString('test_output') === 'streamed') events({ kind: 'warning', message: STREAMED_OUTPUT_WARNING });
    }
    if (command === 'run') runUnderWords(options.getString('run_under'));
    checkSandboxPaths(options);
    reporting = reporterFlags(options); // --output_filter checked before loading, as the other usage errors
  } catch (e) {
    if (e instanceof UsageError) {
      printError(e.message);
      return fail(ExitCode.COMMAND_LINE_ERROR);
    }
    throw e;
  }
  const client = remote?.client;
  if (client) onExit.push(() => client.close());
  // GetCapabilities once per build, while loading and analysis run.
  const remoteReady = client?.capabilities().then(
    () => undefined,
    (e: Error) => e,
  );
  if (patterns.length === 0) {
    events({ kind: 'no-patterns', command });
    if (command === 'run') {
      printError('Must specify a target to run');
      return fail(ExitCode.COMMAND_LINE_ERROR);
    }
  }
  const keepGoing = options.getBool('keep_going');
  let customStatus: CustomWorkspaceStatus | undefined;
  const statusCommand = options.getString('workspace_status_command');
  if (statusCommand !== '') {
    try {
      customStatus = runWorkspaceStatusCommand(statusCommand, ctx.workspace.root, request.env);
    } catch (e) {
      if (!isKilnError(e)) throw e;
      printError(e.message);
      events({ kind: 'build-failed' });
      return fail(ExitCode.BUILD_FAILURE);
    }
  }
  records.workspaceStatus(workspaceStatusValues(request.env, customStatus));
  // `kiln build` repeated with nothing changed: the last null build's record answers it (null-build-record.ts).
  // The Build Event Protocol reports every target and file, which the null build's record does not keep.
  const nullBuilds =
    command === 'build' && !remote && patterns.length > 0 && options.getBool('build') && !records.streamsEvents
      ? new NullBuildRecords(ctx.layout.outputBase)
      : undefined;
  const recordKey =
    nullBuilds &&
    nullBuildKey(
      buildGraphKeyOf(ctx, { command, patterns, options, keepGoing, ...(customStatus ? { customStatus } : {}) }),
      options.fullFingerprint(),
      request.env.PATH,
    );
  if (nullBuilds && recordKey) {
    const repeated = await repeatNullBuild(nullBuilds, recordKey, request, ui);
    if (repeated) return repeated;
  }
  // The processes actions start from come up while loading and analysis run, not on the first action.
  if (options.getBool('build')) spawners.warmUp({ sandbox: mayUseSandbox(strategies) });
  const buildFailed = (exitCode: number = ExitCode.BUILD_FAILURE): BuildResult => {
    events({ kind: 'build-failed' });
    return { exitCode, targets: [] };
  };

  const analysisRequest = {
    command,
    patterns,
    options,
    keepGoing,
    clientEnv: request.env,
    ...(testSettings ? { testSettings } : {}),
    ...(customStatus ? { customStatus } : {}),
  };
  records.phase('Load and analyze dependencies');
  const analyzed = request.interruptibly(() => analyzeBuild(ctx, analysisRequest, events));
  if (analyzed === 'interrupted') {
    printError('build interrupted');
    return buildFailed(ExitCode.INTERRUPTED);
  }
  const analysis: AnalyzedBuild = analyzed.value;
  if ('failed' in analysis) return buildFailed(analysis.failed);
  const { graph } = analysis;
  if (graph.configuration) {
    records.analyzed({
      targets: graph.targets,
      tests: graph.tests ?? [],
      configuration: graph.configuration,
      execRoot: ctx.layout.execRoot,
      actionsCreated: graph.actions.length,
      packagesLoaded: analyzedCounts?.packagesLoaded ?? 0,
      targetsConfigured: analyzedCounts?.targetsConfigured ?? 0,
    });
  }
  const built = (exitCode: number, tests?: BuildResult['tests']): BuildResult => ({
    exitCode,
    targets: graph.targets,
    outputDirectories: graph.outputDirectories,
    ...(tests ? { tests } : {}),
  });
  // With --keep_going the build goes on past loading and analysis errors, but still fails.
  const earlierErrors = analysis.hadErrors;
  if (!options.getBool('build')) {
    if (earlierErrors) return buildFailed();
    events({ kind: 'nothing-executed' });
    return built(ExitCode.SUCCESS);
  }

  // Execution.
  const unreachable = await remoteReady;
  if (unreachable && remote) {
    // As Bazel: without a fallback an unusable executor fails the build; a cache is only a warning.
    if (remote.client.executorEndpoint && !remote.localFallback) {
      printError(unreachable.message);
      return buildFailed(ExitCode.REMOTE_ERROR);
    }
    events({
      kind: 'warning',
      message: `${unreachable.message}; building without the remote ${remote.client.executorEndpoint ? 'executor (--remote_local_fallback)' : 'cache'}`,
    });
    remote = undefined;
  }
  const { layout } = ctx;
  records.phase('Prepare for build');
  const abort = new AbortController();
  void request.interrupted?.then(() => abort.abort());
  const release = await lockOutputBase(layout.outputBase, (pid) => events({ kind: 'waiting-for-lock', pid, outputBase: layout.outputBase }), abort.signal);
  if (release === undefined) return buildFailed(ExitCode.INTERRUPTED);
  let summary: ExecutionSummary;
  // env_inherit values come from this command's environment, never from the cached graph.
  const inherited = command === 'test' ? withInheritedEnv(graph.tests ?? [], graph.actions, request.env) : undefined;
  const tests = inherited?.tests;
  const actions = inherited?.actions ?? graph.actions;
  let outcomes: TestOutcome[] = [];
  try {
    await prepareExecRoot(layout.workspaceRoot, layout.execRoot, externalRepositoriesOf(graph.actions, ctx));
    const closingReport = (success: boolean): ClosingReport => ({
      success,
      targets: graph.targets,
      ...(graph.aspects ? { aspects: graph.aspects } : {}),
      outputDirectories: graph.outputDirectories,
      ...(tests ? { testOutcomes: outcomes } : {}),
      startedAt,
    });
    const closing = { closingLines: (summary: ExecutionSummary) => ui.closingLines(closingReport(summary.success)), failedBeforeExecution: earlierErrors };
    const base = records.reporter(ui.executionReporter(closing, reporting));
    const testReporter = tests && new TestRunReporter(base, tests, layout.execRoot, options.getString('test_output') as TestOutputMode, ui, attemptsFor);
    const reporter = testReporter ?? base;
    // Tests tagged exclusive run after everything else, one at a time (Bazel's exclusive tests); with
    // --test_output=streamed every test does, here, its output shown as it comes.
    const streamed = testReporter !== undefined && options.getString('test_output') === 'streamed';
    const executionOptions: ExecutionOptions = {
      execRoot: layout.execRoot,
      outputBase: layout.outputBase,
      clientEnv: request.env,
      actionEnv: buildActionEnvironment(request.env, options.getList('action_env'), options.getBool('incompatible_strict_action_env')),
      hostActionEnv: buildActionEnvironment(request.env, options.getList('host_action_env'), options.getBool('incompatible_strict_action_env')),
      ...(options.getInt('jobs') > 0 ? { jobs: options.getInt('jobs') } : {}),
      ...(options.getInt('local_test_jobs') > 0 ? { localTestJobs: options.getInt('local_test_jobs') } : {}),
      sandboxPaths: { writable: options.getList('sandbox_writable_path'), tmpfs: options.getList('sandbox_tmpfs_path') },
      keepGoing,
      ...(options.getString('disk_cache') ? { diskCache: resolve(request.cwd, options.getString('disk_cache')) } : {}),
      strategies: streamed ? localTestStrategies(strategies) : strategies,
      ...(streamed ? { liveOutput: (action: Action) => testReporter.liveOutputOf(action) } : {}),
      signal: abort.signal,
      spawners,
      ...(nullBuilds ? { listCheckedFiles: true } : {}),
      ...(remote
        ? {
            remote: withTopLevel(
              remote,
              graph.targets,
              command,
              (tests ?? []).flatMap((t) => t.runs.map((r) => r.action)),
            ),
          }
        : {}),
    };
    try {
      if (tests) clearAttemptLogs(tests, layout.execRoot);
      records.phase('Build artifacts');
      const exclusive = new Set((tests ?? []).filter((t) => streamed || t.tags.includes('exclusive')).flatMap((t) => t.runs.map((r) => r.action)));
      const outputsOf = (run: readonly Action[]) => run.flatMap((a) => a.outputs.map((o) => o.execPath));
      const later = new Set(outputsOf([...exclusive]));
      summary = await executeActions(actions, { ...executionOptions, requested: graph.requested.filter((p) => !later.has(p)) }, reporter);
      if (testReporter && tests) {
        for (const action of exclusive) {
          if (abort.signal.aborted || (!summary.success && !keepGoing)) break;
          await executeActions(actions, { ...executionOptions, jobs: 1, requested: outputsOf([action]) }, testReporter);
        }
        if (!abort.signal.aborted) {
          const retryOptions = streamed ? { ...executionOptions, jobs: 1 } : executionOptions;
          const rerun = (retried: readonly Action[]) => executeActions(actions, { ...retryOptions, requested: outputsOf(retried) }, testReporter);
          await retryFailedRuns(tests, testReporter, attemptsFor, layout.execRoot, rerun);
        }
        outcomes = testOutcomes(tests, testReporter, actions);
        testReporter.finish(outcomes.filter((o) => o.status === 'FAILED' || o.status === 'TIMEOUT').length);
      }
      records.executed({
        builtTargets: builtTargetsOf(graph.targets, actions, summary, layout.execRoot),
        ...(tests && testReporter ? { outcomes, testRuns: testRunsOf(tests, testReporter.attempts, records, layout.execRoot) } : {}),
        baseEnvironment: executionOptions.actionEnv ?? {},
      });
    } catch (e) {
      if (!isKilnError(e)) throw e;
      printError(e.message, e.pos);
      return buildFailed();
    }
    const dirs = graph.outputDirectories;
    await updateConvenienceSymlinks(
      layout,
      { bin: dirs.bin, genfiles: dirs.genfiles, testlogs: dirs.testlogs, outputRoot: OUTPUT_DIR_NAME },
      symlinkOptionsOf(options),
    );
    // checkedFiles says the build succeeded with every result recorded; analysis must have had no error either.
    // The record's closing lines name targets only: a build with --aspects is not recorded.
    if (nullBuilds && recordKey && summary.checkedFiles && !earlierErrors && analysis.analysisInputs && !graph.aspects) {
      nullBuilds.write({
        key: recordKey,
        warnings: analysis.warnings ?? [],
        analyzedTargets: graph.targets.length,
        totalActions: summary.totalActions,
        targets: graph.targets.map((t) => ({ label: t.label, files: t.files })),
        bin: dirs.bin,
        genfiles: dirs.genfiles,
        testlogs: dirs.testlogs,
        analysisInputs: analysis.analysisInputs,
        analysisPackages: analysis.analysisPackages ?? [],
        files: summary.checkedFiles,
      });
    }
  } finally {
    await release();
  }
  const ran = tests ? { targets: tests, outcomes } : undefined;
  if (abort.signal.aborted) return built(ExitCode.INTERRUPTED, ran);
  if (!summary.success || earlierErrors) return built(summary.success ? ExitCode.BUILD_FAILURE : failedActionsExitCode(summary.failures), ran);
  if (tests?.length === 0) return built(ExitCode.NO_TESTS_FOUND, ran);
  if (outcomes.some((o) => o.status !== 'PASSED' && o.status !== 'FLAKY')) return built(ExitCode.TESTS_FAILED, ran);
  return built(ExitCode.SUCCESS, ran);
}

/**
 * A null build answered from the last one's record: when the analysis inputs and every file the
 * record lists are unchanged, reports what the ordinary path would (warnings, the analysis lines,
 * the closing lines with zero processes) and updates the convenience symlinks, holding the output
 * base's lock while it checks. Undefined: take the ordinary path (the record is dropped when stale).
 */
async function repeatNullBuild(records: NullBuildRecords, key: string, request: BuildRequest, ui: BuildUi): Promise<BuildResult | undefined> {
  const { workspace: ctx } = request;
  const record = records.read(key);
  if (!record) return undefined;
  let refreshed: NullBuildRecord | undefined;
  if (!ctx.loader.inputsUnchanged(record.analysisInputs)) {
    // A BUILD edit that changed no package's value (a comment at its end) is still a null build.
    if (!ctx.loader.inputsEquivalent(record.analysisInputs, record.analysisPackages)) {
      records.discard();
      return undefined;
    }
    refreshed = { ...record, analysisInputs: ctx.loader.refreshed(record.analysisInputs) };
  }
  const abort = new AbortController();
  void request.interrupted?.then(() => abort.abort());
  const { outputBase } = ctx.layout;
  const release = await lockOutputBase(outputBase, (pid) => ui.event({ kind: 'waiting-for-lock', pid, outputBase }), abort.signal);
  if (release === undefined) {
    ui.event({ kind: 'build-failed' });
    return { exitCode: ExitCode.INTERRUPTED, targets: [] };
  }
  try {
    if (!filesUnchanged(record, ctx.layout.execRoot)) {
      records.discard();
      return undefined;
    }
    if (refreshed) {
      records.write(refreshed);
      ctx.loader.flush();
    }
    for (const message of record.warnings) ui.event({ kind: 'warning', message });
    ui.event(analyzedEvent(record.analyzedTargets, 0, 0));
    const report: ClosingReport = { success: true, targets: record.targets, outputDirectories: record, startedAt: request.startedAt };
    const reporter = ui.executionReporter({ closingLines: () => ui.closingLines(report), failedBeforeExecution: false }, reporterFlags(request.options));
    const processes = Object.fromEntries(PROCESS_KIND_ORDER.map((kind) => [kind, 0])) as ExecutionSummary['processes'];
    reporter.buildStarted(record.totalActions);
    reporter.buildFinished({ success: true, totalActions: record.totalActions, processes, failures: [] });
    await updateConvenienceSymlinks(
      ctx.layout,
      { bin: record.bin, genfiles: record.genfiles, testlogs: record.testlogs, outputRoot: OUTPUT_DIR_NAME },
      symlinkOptionsOf(request.options),
    );
  } finally {
    await release();
  }
  return { exitCode: ExitCode.SUCCESS, targets: [] };
}

/**
 * The requested targets' outputs, which `--remote_download_outputs=toplevel` downloads; `kiln run`
 * always downloads its program and `kiln test` its tests' logs and results, so `minimal` acts as
 * `toplevel` there (as `bazel run` and `bazel test` do).
 */
function withTopLevel(
  remote: RemoteExecutionOptions,
  targets: readonly BuiltTarget[],
  command: 'build' | 'run' | 'test',
  testActions: readonly Action[],
): RemoteExecutionOptions {
  const mode = command !== 'build' && remote.downloadOutputs === 'minimal' ? 'toplevel' : remote.downloadOutputs;
  const topLevelOutputs = [...targets.flatMap((t) => t.files), ...testActions.flatMap((a) => a.outputs.map((o) => o.execPath))];
  return { ...remote, ...(mode ? { downloadOutputs: mode } : {}), topLevelOutputs };
}

/** Directory flags of execution, checked before loading so that a bad one fails at once, named. */
function checkExecutionDirectories(options: BuildOptions, cwd: string): void {
  if (!options.getBool('build')) return;
  const diskCache = options.getString('disk_cache');
  const problem = diskCache === '' ? undefined : whyDirectoryIsUnusable(resolve(cwd, diskCache));
  if (problem !== undefined) throw new UsageError(`--disk_cache=${diskCache}: ${problem}`);
}

function strategyFlags(options: BuildOptions): StrategyFlags {
  const byMnemonic: Record<string, ReturnType<typeof parseStrategyList>> = {};
  const flags: { -readonly [K in keyof StrategyFlags]: StrategyFlags[K] } = {};
  const spawn = options.getString('spawn_strategy');
  if (spawn) flags.spawnStrategy = parseStrategyList(spawn, '--spawn_strategy');
  const genrule = options.getString('genrule_strategy');
  if (genrule) flags.genruleStrategy = parseStrategyList(genrule, '--genrule_strategy');
  for (const value of options.getList('strategy')) {
    // A bare `--strategy=local` sets the default, as in Bazel.
    if (!value.includes('=')) flags.spawnStrategy = parseStrategyList(value, '--strategy');
    else {
      const [mnemonic, list] = parseMnemonicStrategy(value);
      byMnemonic[mnemonic] = list;
    }
  }
  if (Object.keys(byMnemonic).length > 0) flags.strategyByMnemonic = byMnemonic;
  flags.sandboxFallback = options.getBool('sandbox_fallback');
  const dynamicLocal = parseDynamicStrategies(options.getList('dynamic_local_strategy'), 'local');
  if (dynamicLocal) flags.dynamicLocal = dynamicLocal;
  const dynamicRemote = parseDynamicStrategies(options.getList('dynamic_remote_strategy'), 'remote');
  if (dynamicRemote) flags.dynamicRemote = dynamicRemote;
  return flags;
}

function reporterFlags(options: BuildOptions): ReporterFlags {
  const filter = options.getString('output_filter');
  const rateLimitMs = progressRateLimitMs(options.getString('show_progress_rate_limit'));
  return {
    verboseFailures: options.getBool('verbose_failures'),
    subcommands: options.getBool('subcommands'),
    ...(filter !== '' ? { outputFilter: outputFilterOf(filter) } : {}),
    ...(rateLimitMs > 0 ? { progressRateLimitMs: rateLimitMs } : {}),
  };
}

/** `--show_progress_rate_limit`: Bazel's double, in seconds; 0 or less keeps the reporter's own pace. */
function progressRateLimitMs(text: string): number {
  const seconds = Number(text);
  if (text.trim() === '' || !Number.isFinite(seconds))
    throw new UsageError(`While parsing option --show_progress_rate_limit=${text}: '${text}' is not a double`);
  return seconds > 0 ? Math.round(seconds * 1000) : 0;
}

/** `--output_filter`: a regular expression (Bazel's is Java's; Kiln's JavaScript's, the same for the usual `^//pkg` forms). */
function outputFilterOf(text: string): RegExp {
  try {
    return new RegExp(text);
  } catch (e) {
    throw new UsageError(`While parsing option --output_filter=${text}: Failed to build valid regular expression: ${(e as Error).message}`);
  }
}

/** The other repositories whose sources the actions read (`external/<name>/...`), with their directories. */
function externalRepositoriesOf(actions: readonly Action[], ctx: WorkspaceContext): Map<string, string> {
  const repos = new Map<string, string>();
  for (const action of actions) {
    for (const input of action.inputs) {
      if (input.kind !== 'source' || !input.execPath.startsWith('external/')) continue;
      const name = input.execPath.split('/')[1]!;
      if (!repos.has(name)) repos.set(name, ctx.loader.repository(name).root);
    }
  }
  return repos;
}

/** The convenience symlinks' flags. */
function symlinkOptionsOf(options: BuildOptions): ConvenienceSymlinkOptions {
  return { prefix: options.getString('symlink_prefix'), genfiles: !options.getBool('incompatible_skip_genfiles_symlink') };
}

/** `--sandbox_writable_path` and `--sandbox_tmpfs_path` name absolute paths (Bazel's check); throws UsageError. */
function checkSandboxPaths(options: BuildOptions): void {
  for (const name of ['sandbox_writable_path', 'sandbox_tmpfs_path']) {
    for (const path of options.getList(name)) {
      if (!path.startsWith('/')) throw new UsageError(`While parsing option --${name}=${path}: must be an absolute path`);
      if (path === '/') throw new UsageError(`While parsing option --${name}=${path}: cannot be the root directory`);
    }
  }
}
