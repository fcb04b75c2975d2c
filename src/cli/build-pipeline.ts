import { resolve } from 'node:path';
import type { Action } from '../actions/index.js';
import { parseBuildOptions, type BuildOptions, type OutputDirectories, type TestSettings } from '../analysis/index.js';
import { ExitCode, isKilnError, UsageError } from '../core/index.js';
import {
  ActionSpawners,
  executeActions,
  mayUseSandbox,
  OUTPUT_DIR_NAME,
  failedActionsExitCode,
  parseMnemonicStrategy,
  parseDynamicStrategies,
  parseStrategyList,
  PlainReporter,
  prepareExecRoot,
  PROCESS_KIND_ORDER,
  TerminalReporter,
  type ClosingOptions,
  type ExecutionOptions,
  type ExecutionReporter,
  type ExecutionSummary,
  type RemoteExecutionOptions,
  type StrategyFlags,
} from '../exec/index.js';
import { remoteExecutionOptions } from './remote-options.js';
import { analyzeBuild, buildGraphKeyOf, printAnalyzed, type AnalyzedBuild } from './analysis-phase.js';
import { filesUnchanged, nullBuildKey, NullBuildRecords } from './null-build-record.js';
import type { BuildGraph, BuiltTarget } from './build-graph-cache.js';
import { interruptibly, type CliIO } from './io.js';
import { InterruptedBySigint } from './sigint-breakable.js';
import { applyRcFiles } from './rc-file.js';
import { lockOutputBase, updateConvenienceSymlinks } from './output-base.js';
import { whyDirectoryIsUnusable } from './usable-directory.js';
import { openWorkspace, printError, type WorkspaceContext } from './workspace-context.js';
import {
  clearAttemptLogs,
  localTestStrategies,
  printTestSummary,
  retryFailedRuns,
  STREAMED_OUTPUT_WARNING,
  summaryBlocks,
  testOutcomes,
  withInheritedEnv,
} from './test-phase.js';
import { TestRunReporter, type TestOutputMode } from './test-run-reporter.js';
import { flakyAttemptsFrom, testSettingsFrom } from './test-settings.js';
import type { TestOutcome } from './test-summary.js';

/** What a finished build hands to `run`: the requested targets and where their outputs live. */
interface BuildResult {
  readonly exitCode: number;
  readonly targets: readonly BuiltTarget[];
  readonly outputDirectories?: OutputDirectories;
  readonly ctx?: WorkspaceContext;
}

/**
 * The whole of `kiln build` (and the build half of `kiln run`; `kiln test` also runs the tests,
 * retries flaky ones and prints the test summary): flags, workspace, target patterns, loading,
 * analysis, execution of the actions the requested targets' default outputs need, convenience
 * symlinks, Bazel's closing lines. Never throws for user errors.
 */
export async function runBuild(args: readonly string[], io: CliIO, command: 'build' | 'run' | 'test'): Promise<BuildResult> {
  const spawners = new ActionSpawners(io.env);
  const onExit: (() => void)[] = [];
  try {
    return await buildWith(args, io, command, spawners, onExit);
  } finally {
    for (const close of onExit) close();
    await spawners.close();
  }
}

async function buildWith(
  args: readonly string[],
  io: CliIO,
  command: 'build' | 'run' | 'test',
  spawners: ActionSpawners,
  onExit: (() => void)[],
): Promise<BuildResult> {
  const startedAt = performance.now();
  const fail = (exitCode: number): BuildResult => ({ exitCode, targets: [] });
  const opened = openWorkspace(io, command, args);
  if (typeof opened === 'string') {
    printError(io, opened);
    return fail(ExitCode.COMMAND_LINE_ERROR);
  }
  const { ctx } = opened;
  let options: BuildOptions;
  let patterns: readonly string[];
  let strategies: StrategyFlags;
  let remote: RemoteExecutionOptions | undefined;
  let testSettings: TestSettings | undefined;
  let attemptsFor: (flaky: boolean) => number = () => 1;
  try {
    let warnings: readonly string[];
    ({ options, residue: patterns, warnings } = parseBuildOptions(await applyRcFiles(command, opened.rest, ctx.workspace.root, io)));
    for (const warning of warnings) io.stderr.write(`WARNING: ${warning}\n`);
    strategies = strategyFlags(options);
    remote = await remoteExecutionOptions(options, io.cwd, io.version ?? 'unknown', {
      workspace: ctx.workspace.root,
      env: io.env,
      warn: (m) => io.stderr.write(`WARNING: ${m}\n`),
    });
    checkExecutionDirectories(options, io.cwd);
    if (command === 'test') {
      testSettings = testSettingsFrom(options, io.env, ctx.workspace.name);
      attemptsFor = flakyAttemptsFrom(options);
      if (options.getString('test_output') === 'streamed') io.stderr.write(`WARNING: ${STREAMED_OUTPUT_WARNING}\n`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      printError(io, e.message);
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
    io.stderr.write(`WARNING: Usage: kiln ${command} <options> <targets>.\nInvoke \`kiln help ${command}\` for full description of usage and options.\n`);
    if (command === 'run') {
      printError(io, 'Must specify a target to run');
      return fail(ExitCode.COMMAND_LINE_ERROR);
    }
  }
  const keepGoing = options.getBool('keep_going');
  // `kiln build` repeated with nothing changed: the last null build's record answers it (null-build-record.ts).
  const nullBuilds =
    command === 'build' && !remote && patterns.length > 0 && options.getBool('build') ? new NullBuildRecords(ctx.layout.outputBase) : undefined;
  const recordKey = nullBuilds && nullBuildKey(buildGraphKeyOf(ctx, { command, patterns, options, keepGoing }), options.fullFingerprint(), io.env.PATH);
  if (nullBuilds && recordKey) {
    const repeated = await repeatNullBuild(nullBuilds, recordKey, ctx, options, io, startedAt);
    if (repeated) return repeated;
  }
  // The processes actions start from come up while loading and analysis run, not on the first action.
  if (options.getBool('build')) spawners.warmUp({ sandbox: mayUseSandbox(strategies) });
  const buildFailed = (exitCode: number = ExitCode.BUILD_FAILURE): BuildResult => {
    io.stderr.write(`FAILED: Build did NOT complete successfully\n`);
    return { exitCode, targets: [], ctx };
  };

  let analysis: AnalyzedBuild;
  try {
    analysis = interruptibly(io, () => analyzeBuild(ctx, { command, patterns, options, keepGoing, ...(testSettings ? { testSettings } : {}) }, io));
  } catch (e) {
    if (!(e instanceof InterruptedBySigint)) throw e;
    printError(io, 'build interrupted');
    return buildFailed(ExitCode.INTERRUPTED);
  }
  if ('failed' in analysis) return buildFailed(analysis.failed);
  const { graph } = analysis;
  const built = (exitCode: number): BuildResult => ({ exitCode, targets: graph.targets, outputDirectories: graph.outputDirectories, ctx });
  // With --keep_going the build goes on past loading and analysis errors, but still fails.
  const earlierErrors = analysis.hadErrors;
  if (!options.getBool('build')) {
    if (earlierErrors) return buildFailed();
    io.stderr.write('INFO: Build completed successfully, 0 total actions\n');
    return built(ExitCode.SUCCESS);
  }

  // Execution.
  const unreachable = await remoteReady;
  if (unreachable && remote) {
    // As Bazel: without a fallback an unusable executor fails the build; a cache is only a warning.
    if (remote.client.executorEndpoint && !remote.localFallback) {
      printError(io, unreachable.message);
      return buildFailed(ExitCode.REMOTE_ERROR);
    }
    io.stderr.write(
      `WARNING: ${unreachable.message}; building without the remote ${remote.client.executorEndpoint ? 'executor (--remote_local_fallback)' : 'cache'}\n`,
    );
    remote = undefined;
  }
  const { layout } = ctx;
  const abort = new AbortController();
  void io.interrupted?.then(() => abort.abort());
  const release = await lockOutputBase(
    layout.outputBase,
    (pid) => io.stderr.write(`Another command (pid=${pid}) is using the output base ${layout.outputBase}. Waiting for it to complete...\n`),
    abort.signal,
  );
  if (release === undefined) return buildFailed(ExitCode.INTERRUPTED);
  let summary: ExecutionSummary;
  // env_inherit values come from this command's environment, never from the cached graph.
  const inherited = command === 'test' ? withInheritedEnv(graph.tests ?? [], graph.actions, io.env) : undefined;
  const tests = inherited?.tests;
  const actions = inherited?.actions ?? graph.actions;
  let outcomes: TestOutcome[] = [];
  const streams = { stdout: (text: string) => void io.stdout.write(text), stderr: (text: string) => void io.stderr.write(text) };
  try {
    await prepareExecRoot(layout.workspaceRoot, layout.execRoot, externalRepositoriesOf(graph.actions, ctx));
    const closing: ClosingOptions = {
      // As Bazel: the test summary, then the requested targets, then the elapsed time.
      closingLines: (summary) =>
        (tests ? summaryBlocks(outcomes) : '') +
        targetLines(graph, summary.success) +
        `INFO: Elapsed time: ${((performance.now() - startedAt) / 1000).toFixed(3)}s\n`,
      failedBeforeExecution: earlierErrors,
    };
    const base = baseReporter(closing, options, io);
    const testReporter = tests && new TestRunReporter(base, tests, layout.execRoot, options.getString('test_output') as TestOutputMode, streams, attemptsFor);
    const reporter = testReporter ?? base;
    // Tests tagged exclusive run after everything else, one at a time (Bazel's exclusive tests); with
    // --test_output=streamed every test does, here, its output shown as it comes.
    const streamed = testReporter !== undefined && options.getString('test_output') === 'streamed';
    const executionOptions: ExecutionOptions = {
      execRoot: layout.execRoot,
      outputBase: layout.outputBase,
      clientEnv: io.env,
      ...(options.getInt('jobs') > 0 ? { jobs: options.getInt('jobs') } : {}),
      keepGoing,
      ...(options.getString('disk_cache') ? { diskCache: resolve(io.cwd, options.getString('disk_cache')) } : {}),
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
    } catch (e) {
      if (!isKilnError(e)) throw e;
      printError(io, e.message, e.pos);
      return buildFailed();
    }
    const dirs = graph.outputDirectories;
    await updateConvenienceSymlinks(layout, { bin: dirs.bin, genfiles: dirs.genfiles, testlogs: dirs.testlogs, outputRoot: OUTPUT_DIR_NAME });
    // checkedFiles says the build succeeded with every result recorded; analysis must have had no error either.
    if (nullBuilds && recordKey && summary.checkedFiles && !earlierErrors && analysis.analysisInputs) {
      nullBuilds.write({
        key: recordKey,
        warnings: analysis.warnings ?? [],
        analyzedTargets: graph.targets.length,
        totalActions: summary.totalActions,
        targetLines: targetLines(graph, true),
        bin: dirs.bin,
        genfiles: dirs.genfiles,
        testlogs: dirs.testlogs,
        analysisInputs: analysis.analysisInputs,
        files: summary.checkedFiles,
      });
    }
  } finally {
    await release();
  }
  if (tests) {
    if (tests.length > 0) printTestSummary(outcomes, tests, options.getBool('test_verbose_timeout_warnings'), streams);
    else printError(io, 'No test targets were found, yet testing was requested');
  }
  if (abort.signal.aborted) return built(ExitCode.INTERRUPTED);
  if (!summary.success || earlierErrors) return built(summary.success ? ExitCode.BUILD_FAILURE : failedActionsExitCode(summary.failures));
  if (tests?.length === 0) return built(ExitCode.NO_TESTS_FOUND);
  if (outcomes.some((o) => o.status !== 'PASSED' && o.status !== 'FLAKY')) return built(ExitCode.TESTS_FAILED);
  return built(ExitCode.SUCCESS);
}

/**
 * A null build answered from the last one's record: when the analysis inputs and every file the
 * record lists are unchanged, prints what the ordinary path would (warnings, the analysis lines,
 * the closing lines with zero processes) and updates the convenience symlinks, holding the output
 * base's lock while it checks. Undefined: take the ordinary path (the record is dropped when stale).
 */
async function repeatNullBuild(
  records: NullBuildRecords,
  key: string,
  ctx: WorkspaceContext,
  options: BuildOptions,
  io: CliIO,
  startedAt: number,
): Promise<BuildResult | undefined> {
  const record = records.read(key);
  if (!record) return undefined;
  if (!ctx.loader.inputsUnchanged(record.analysisInputs)) {
    records.discard();
    return undefined;
  }
  const abort = new AbortController();
  void io.interrupted?.then(() => abort.abort());
  const release = await lockOutputBase(
    ctx.layout.outputBase,
    (pid) => io.stderr.write(`Another command (pid=${pid}) is using the output base ${ctx.layout.outputBase}. Waiting for it to complete...\n`),
    abort.signal,
  );
  if (release === undefined) {
    io.stderr.write(`FAILED: Build did NOT complete successfully\n`);
    return { exitCode: ExitCode.INTERRUPTED, targets: [], ctx };
  }
  try {
    if (!filesUnchanged(record, ctx.layout.execRoot)) {
      records.discard();
      return undefined;
    }
    for (const warning of record.warnings) io.stderr.write(warning);
    printAnalyzed(io, record.analyzedTargets, 0, 0);
    const elapsed = () => `INFO: Elapsed time: ${((performance.now() - startedAt) / 1000).toFixed(3)}s\n`;
    const reporter = baseReporter({ closingLines: () => record.targetLines + elapsed(), failedBeforeExecution: false }, options, io);
    const processes = Object.fromEntries(PROCESS_KIND_ORDER.map((kind) => [kind, 0])) as ExecutionSummary['processes'];
    reporter.buildStarted(record.totalActions);
    reporter.buildFinished({ success: true, totalActions: record.totalActions, processes, failures: [] });
    await updateConvenienceSymlinks(ctx.layout, { bin: record.bin, genfiles: record.genfiles, testlogs: record.testlogs, outputRoot: OUTPUT_DIR_NAME });
  } finally {
    await release();
  }
  return { exitCode: ExitCode.SUCCESS, targets: [], ctx };
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

function baseReporter(closing: ClosingOptions, options: BuildOptions, io: CliIO): ExecutionReporter {
  const verboseFailures = options.getBool('verbose_failures');
  const subcommands = options.getBool('subcommands');
  const stream = io.stderr as { isTTY?: boolean; columns?: number };
  const sink = { write: (text: string) => void io.stderr.write(text) };
  if (stream.isTTY) return new TerminalReporter(sink, { verboseFailures, subcommands, ...closing, ...(stream.columns ? { columns: stream.columns } : {}) });
  return new PlainReporter(sink, { verboseFailures, subcommands, ...closing });
}

/**
 * Bazel's `--show_result` default: the per-target block is printed only when at most this many
 * targets were requested (a `//...` build stays short).
 */
const SHOW_RESULT = 1;

/** Bazel's `Target //pkg:x up-to-date:` block of a successful build, with paths through the convenience symlinks. */
function targetLines(graph: BuildGraph, success: boolean): string {
  if (!success || graph.targets.length > SHOW_RESULT) return '';
  let text = '';
  for (const t of graph.targets) {
    if (t.files.length === 0) {
      text += `Target ${t.label} up-to-date (nothing to build)\n`;
      continue;
    }
    text += `Target ${t.label} up-to-date:\n`;
    for (const f of t.files) text += `  ${displayPath(f, graph.outputDirectories)}\n`;
  }
  return text;
}

/** `bazel-out/k8-fastbuild/bin/pkg/x` → `kiln-bin/pkg/x` (the path through the convenience symlink). */
export function displayPath(execPath: string, dirs: OutputDirectories): string {
  const bin = `${dirs.bin}/`;
  if (execPath.startsWith(bin)) return `kiln-bin/${execPath.slice(bin.length)}`;
  const genfiles = `${dirs.genfiles}/`;
  if (execPath.startsWith(genfiles)) return `kiln-genfiles/${execPath.slice(genfiles.length)}`;
  return execPath;
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
