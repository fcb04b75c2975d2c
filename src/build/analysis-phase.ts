import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Action } from '../actions/index.js';
import {
  Analyzer,
  IncrementalAnalysis,
  bindUserFlagValues,
  createConfigurations,
  currentHost,
  LoadedTargetGraph,
  platformDeclarationsFrom,
  programOf,
  runfilesTree,
  testTargetOf,
  userFlagProblem,
  type BuildConfiguration,
  type BuildOptions,
  type ConfigurationPair,
  type ConfiguredTarget,
  type FileEntry,
  type OutputDirectories,
  type RunfilesTree,
  type TestSettings,
  type TestTarget,
} from '../analysis/index.js';
import { codeStamp, ExitCode, isKilnError, KilnError, nodeCrypto, UsageError, type Position } from '../core/index.js';
import { readRegistrations, type PackageRecord } from '../loading/index.js';
import { resolveTargetPatterns, TargetLoader, TargetPatternError } from '../query/index.js';
import { BuildGraphCache } from './build-graph-cache.js';
import type { BuildGraph } from './build-graph.js';
import { warningText, type BuildEvent, type BuildEventSink } from './events.js';
import { workspaceStatusValues, type CustomWorkspaceStatus } from './workspace-status-command.js';
import type { WorkspaceContext } from './workspace/index.js';
import { selectTests } from './test-selection.js';
import { analyzeTopLevelAspects, requestedOutputGroups } from './top-level-aspects.js';
import type { RecordedConfiguration } from './records/index.js';

export interface AnalysisRequest {
  readonly command: 'build' | 'run' | 'test';
  /** `kiln test`: how test actions are made (their key depends on it, so it keys the cache too). */
  readonly testSettings?: TestSettings;
  readonly patterns: readonly string[];
  readonly options: BuildOptions;
  readonly keepGoing: boolean;
  /** The client's environment (BUILD_USER for stamping). */
  readonly clientEnv: Readonly<Record<string, string | undefined>>;
  /** What `--workspace_status_command` printed, over Kiln's own status keys. */
  readonly customStatus?: CustomWorkspaceStatus;
}

/** The graph to execute; `hadErrors` when loading or analysis failed under --keep_going. */
type AnalysisOutcome = { readonly graph: BuildGraph; readonly hadErrors: boolean } | { readonly failed: number };

/** An error-free graph also says what its loading and analysis read and the warnings they printed. */
export type AnalyzedBuild = AnalysisOutcome & {
  readonly analysisInputs?: readonly (readonly [string, string])[];
  /** The packages loaded, with their values' fingerprints (see PackageLoader.inputsEquivalent). */
  readonly analysisPackages?: readonly PackageRecord[];
  readonly warnings?: readonly string[];
};

/** Stored configured targets are valid only for the Kiln build that wrote them (see codeStamp). */
const CONFIGURED_TARGETS_VERSION = `kiln-configured-targets-1:${codeStamp(import.meta.url)}`;

/**
 * The contents of the workspace's own files (MODULE.bazel, WORKSPACE.bazel, WORKSPACE): toolchain and
 * platform registrations and local repositories are read from them outside the package graph, so
 * what depends on them is keyed by them whole (they change rarely).
 */
function workspaceFilesFingerprint(ctx: WorkspaceContext): string {
  let known = workspaceFilesFingerprints.get(ctx);
  if (known === undefined) {
    known = hashWorkspaceFiles(ctx.workspace.root);
    workspaceFilesFingerprints.set(ctx, known);
  }
  return known;
}

/** Read once per command: the null-build key, the graph's key and the configured targets' store all use it. */
const workspaceFilesFingerprints = new WeakMap<WorkspaceContext, string>();

function hashWorkspaceFiles(root: string): string {
  const hash = nodeCrypto().createHash('sha256');
  for (const name of ['MODULE.bazel', 'WORKSPACE.bazel', 'WORKSPACE']) {
    let text: string | undefined;
    try {
      text = readFileSync(join(root, name), 'utf8');
    } catch {
      text = undefined;
    }
    hash.update(`${name}\u0000${text === undefined ? '-' : `+${text}`}\u0000`);
  }
  // The .bzl files of the macros WORKSPACE calls, which may register toolchains too.
  for (const path of readRegistrations(root).sources) hash.update(`${path}\u0000${readFileSync(path, 'utf8')}\u0000`);
  return hash.digest('hex');
}

/** The key of a command line's build graph: equal keys and unchanged inputs, equal graph. */
export function buildGraphKeyOf(ctx: WorkspaceContext, request: Omit<AnalysisRequest, 'clientEnv'>): string {
  const host = currentHost();
  return BuildGraphCache.key({
    workspaceFiles: workspaceFilesFingerprint(ctx),
    command: request.command,
    patterns: request.patterns,
    offset: ctx.offset,
    options: request.options.fingerprint(),
    workspaceName: ctx.workspace.name,
    ignoredDirectories: [...ctx.workspace.ignored].sort(),
    host: { platform: host.platform, arch: host.arch },
    ...(request.testSettings ? { testSettings: request.testSettings } : {}),
    // Stamped actions read the stable status: a change re-analyses. A volatile one alone does not (Bazel's rule).
    ...(request.customStatus ? { stableStatus: [...request.customStatus.stable] } : {}),
  });
}

/**
 * Loading and analysis of `kiln build` and `kiln run`: target patterns to the build graph, printing
 * errors and warnings as Bazel does. An error-free graph is kept in the output base and reused by a
 * later command with the same command line while none of the files and directories its loading and
 * analysis read has changed (BuildGraphCache).
 */
export function analyzeBuild(ctx: WorkspaceContext, request: AnalysisRequest, events: BuildEventSink): AnalyzedBuild {
  const cache = new BuildGraphCache(join(ctx.layout.outputBase, 'analysis'));
  const key = buildGraphKeyOf(ctx, request);
  let equivalent = false;
  const cached = cache.lookup(key, (inputs, packages) => {
    if (ctx.loader.inputsUnchanged(inputs)) return true;
    equivalent = ctx.loader.inputsEquivalent(inputs, packages);
    return equivalent;
  });
  if (cached) {
    for (const message of cached.warnings) events({ kind: 'warning', message });
    events(analyzedEvent(cached.graph.targets.length, 0, 0, cached.graph.tests?.length));
    let inputs = cached.inputs;
    if (equivalent) {
      // The graph holds; what it was read from changed (a comment): stored again with the files as they are now.
      inputs = ctx.loader.refreshed(cached.inputs);
      ctx.loader.flush();
      cache.store(key, inputs, cached.graph, cached.warnings, cached.packages);
    }
    return { graph: cached.graph, hadErrors: false, analysisInputs: inputs, analysisPackages: cached.packages, warnings: cached.warnings };
  }
  const warnings: string[] = [];
  const warn = (message: string, pos: Position) => {
    warnings.push(warningText({ message, pos }));
    events({ kind: 'warning', message, pos });
  };
  const { value: outcome, inputs } = ctx.loader.trackInputs(() => loadAndAnalyze(ctx, request, events, warn));
  // Loading is over: persist the package cache so the next command skips unchanged BUILD files.
  ctx.loader.flush();
  if (!('graph' in outcome) || outcome.hadErrors) return outcome;
  const packages = ctx.loader.loadedPackageRecords();
  cache.store(key, inputs, outcome.graph, warnings, packages);
  return { ...outcome, analysisInputs: [...inputs], analysisPackages: packages, warnings };
}

/**
 * User-defined flags need their build settings loaded: a bare non-boolean flag takes the next word
 * as its value (`--//pkg:flag value`), and every flag must name a build setting and carry a value
 * of its type. Returns the options and patterns to use, or the problem in Bazel's words.
 */
export function bindUserFlags(graph: LoadedTargetGraph, request: AnalysisRequest): { options: BuildOptions; patterns: readonly string[] } | KilnError {
  if (request.options.userFlags.size === 0) return { options: request.options, patterns: request.patterns };
  const typeOf = (label: string) => {
    try {
      return graph.buildSetting(label)?.type;
    } catch {
      return undefined;
    }
  };
  const bound = bindUserFlagValues({ options: request.options, residue: [...request.patterns], occurrences: [], warnings: [] }, typeOf);
  const problem = userFlagProblem(bound.options.userFlags, { buildSetting: (label) => graph.buildSettingForFlag(label) });
  return problem ?? { options: bound.options, patterns: bound.residue };
}

function loadAndAnalyze(
  ctx: WorkspaceContext,
  original: AnalysisRequest,
  events: BuildEventSink,
  warn: (message: string, pos: Position) => void,
): AnalysisOutcome {
  const printError = (message: string, pos?: Position) => events({ kind: 'error', message, ...(pos ? { pos } : {}) });
  let request = original;
  const graph = new LoadedTargetGraph(ctx.loader);
  try {
    const bound = bindUserFlags(graph, original);
    if (bound instanceof KilnError) {
      printError(bound.message);
      return { failed: bound instanceof UsageError ? ExitCode.COMMAND_LINE_ERROR : ExitCode.BUILD_FAILURE };
    }
    request = { ...original, ...bound };
  } catch (e) {
    if (!isKilnError(e)) throw e;
    printError(`Error loading option: ${e.message}`, e.pos);
    return { failed: ExitCode.BUILD_FAILURE };
  }
  const { keepGoing } = request;
  // Loading: target patterns to labels.
  let requested: RequestedTarget[];
  let loadingFailed: boolean;
  try {
    const expanded = expandTargetPatterns(ctx, request.patterns, keepGoing, printError);
    requested = expanded.targets;
    loadingFailed = expanded.hadErrors;
    if (loadingFailed && !keepGoing) return { failed: ExitCode.BUILD_FAILURE };
  } catch (e) {
    if (e instanceof TargetPatternError) {
      printError(e.message);
      return { failed: ExitCode.BUILD_FAILURE };
    }
    if (isKilnError(e)) {
      printError(e.message, e.pos);
      return { failed: ExitCode.BUILD_FAILURE };
    }
    throw e;
  }
  let testLabels: readonly string[] = [];
  if (request.command !== 'run') {
    // test_suites stand for their tests; `kiln test` runs those that pass the test filters.
    try {
      const selection = selectTests(ctx.loader, requested, {
        buildTagFilters: request.options.getList('build_tag_filters'),
        runsTests: request.command === 'test',
        tagFilters: request.options.getList('test_tag_filters'),
        sizeFilters: request.options.getList('test_size_filters'),
        buildTestsOnly: request.options.getBool('build_tests_only'),
      });
      for (const e of selection.errors) printError(e.message, e.suite.target.location);
      if (selection.errors.length > 0) {
        loadingFailed = true;
        if (!keepGoing) return { failed: ExitCode.BUILD_FAILURE };
      }
      requested = [...selection.build];
      if (request.command === 'test') testLabels = selection.tests;
    } catch (e) {
      if (!isKilnError(e)) throw e;
      printError(e.message, e.pos);
      return { failed: ExitCode.BUILD_FAILURE };
    }
  }
  if (request.command === 'run' && requested.length !== 1) {
    printError(`Only a single target can be run. Your target pattern(s) ${request.patterns.join(' ')} matched ${requested.length} targets`);
    return { failed: ExitCode.COMMAND_LINE_ERROR };
  }

  // Analysis.
  let analyzer: Analyzer;
  let incremental: IncrementalAnalysis;
  let outputDirectories: BuildGraph['outputDirectories'];
  let configuration: RecordedConfiguration;
  try {
    const configurations = configurationsFor(graph, request.options);
    outputDirectories = configurations.target.outputDirectories;
    configuration = recordedConfiguration(configurations.target);
    incremental = new IncrementalAnalysis(
      ctx.loader,
      graph,
      configurations,
      join(ctx.layout.outputBase, 'analysis', 'configured.bin'),
      `${CONFIGURED_TARGETS_VERSION}:${ctx.workspace.name}:${workspaceFilesFingerprint(ctx)}`,
      {
        warn,
        debug: (message, where) => events({ kind: 'debug', message, where }),
      },
    );
    analyzer = new Analyzer(graph, {
      configurations,
      buildSettings: (label) => graph.buildSetting(label),
      packageLoader: ctx.loader,
      memo: incremental,
      warn: (message, pos) => incremental.warn(message, pos),
      workspaceName: ctx.workspace.name || '__main__',
      workspaceStatus: workspaceStatusValues(request.clientEnv, request.customStatus),
      debug: (message, where) => incremental.debug(message, where),
      info: (message) => events({ kind: 'info', message }),
    });
  } catch (e) {
    if (!isKilnError(e)) throw e;
    printError(e.message, e.pos);
    return { failed: ExitCode.BUILD_FAILURE };
  }
  const configured: ConfiguredTarget[] = [];
  let analysisFailed = false;
  for (const t of requested) {
    try {
      const ct = t.fromWildcard ? analyzer.analyzeFromPattern(t.label) : analyzer.analyzeTopLevel(t.label);
      if (ct) configured.push(ct);
    } catch (e) {
      if (!isKilnError(e)) throw e;
      printError(e.message, e.pos);
      analysisFailed = true;
      if (!keepGoing) break;
      events({ kind: 'warning', message: `errors encountered while analyzing target '${t.label}': it will not be built` });
    }
  }
  const aspectValues = request.options.getList('aspects');
  const topLevelAspects =
    aspectValues.length === 0 || (analysisFailed && !keepGoing)
      ? undefined
      : analyzeTopLevelAspects(analyzer, graph, aspectValues, configured, request.options.getList('output_groups'), printError);
  // What was analysed without error is kept for the next command, even when another target failed.
  incremental.flush();
  if (topLevelAspects?.failed) {
    if (!keepGoing) return { failed: ExitCode.BUILD_FAILURE };
    analysisFailed = true;
  }
  if (analysisFailed && !keepGoing) {
    printError('Analysis of target(s) failed; build aborted');
    return { failed: ExitCode.BUILD_FAILURE };
  }
  const tests: TestTarget[] = [];
  if (request.testSettings) {
    const byLabel = new Map(configured.map((ct) => [ct.label, ct]));
    for (const label of testLabels) {
      const ct = byLabel.get(label);
      if (!ct) continue; // failed analysis (reported) or incompatible with the platform
      try {
        tests.push(testTargetOf(ct, request.testSettings));
      } catch (e) {
        if (!isKilnError(e)) throw e;
        printError(e.message, e.pos);
        analysisFailed = true;
        if (!keepGoing) return { failed: ExitCode.BUILD_FAILURE };
      }
    }
  }
  events(
    analyzedEvent(
      configured.length,
      ctx.loader.packagesLoaded,
      analyzer.configuredCount,
      request.testSettings ? tests.length : undefined,
      analyzer.aspects.configuredCount,
    ),
  );
  const testActions = tests.flatMap((t) => [t.runfilesAction, ...t.runs.map((r) => r.action)]);
  // `kiln run` starts its program beside a runfiles tree, as `bazel run` does.
  const workspaceName = ctx.workspace.name || '__main__';
  const runTrees = new Map<string, RunfilesTree>();
  if (request.command === 'run') {
    for (const ct of configured) {
      const tree = runfilesTreeToRun(ct, workspaceName);
      if (tree) runTrees.set(ct.label, tree);
    }
  }
  const extraActions = [...testActions, ...[...runTrees.values()].map((t) => t.action)];
  return {
    graph: {
      targets: configured.map((t) => ({
        label: t.label,
        targetKind: targetKindOf(t),
        files: filesToBuild(t, request.options.getList('output_groups')).map((f) => f.artifact.execPath),
        ...(t.executable ? { executable: t.executable.artifact.execPath } : {}),
        ...(t.runEnvironment ? { runEnvironment: t.runEnvironment } : {}),
        ...(runTrees.has(t.label) ? { runfilesDir: runTrees.get(t.label)!.dir } : {}),
      })),
      ...(topLevelAspects ? { aspects: topLevelAspects.aspects } : {}),
      actions: [...analyzer.actions(), ...extraActions],
      requested: [
        ...requestedOutputs(configured, request.command === 'run', request.options.getList('output_groups'), extraActions),
        ...(topLevelAspects?.aspects.flatMap((a) => a.files) ?? []),
      ],
      outputDirectories,
      configuration,
      ...(request.testSettings ? { tests } : {}),
    },
    hadErrors: loadingFailed || analysisFailed,
  };
}

/** The output directories of the target configuration `options` make (`kiln info`'s per-configuration paths). */
export function targetOutputDirectories(ctx: WorkspaceContext, options: BuildOptions): OutputDirectories {
  return configurationsFor(new LoadedTargetGraph(ctx.loader), options).target.outputDirectories;
}

/** The target and exec configurations of `options`, with the platforms the workspace declares. */
export function configurationsFor(graph: LoadedTargetGraph, options: BuildOptions): ConfigurationPair {
  return createConfigurations(options, { host: currentHost(), platforms: platformDeclarationsFrom(graph) });
}

/** The runfiles tree of the program `kiln run` starts; none for a source file (nothing is built for it). */
function runfilesTreeToRun(ct: ConfiguredTarget, workspaceName: string): RunfilesTree | undefined {
  const program = programOf(ct);
  return program?.artifact.kind === 'derived'
    ? runfilesTree(program, ct.runfiles, workspaceName, ct.label, ct.config.options.getBool('legacy_external_runfiles'))
    : undefined;
}

/** The `analyzed` event; a reused build graph loaded and configured nothing. */
export function analyzedEvent(targets: number, packagesLoaded: number, targetsConfigured: number, tests?: number, aspectsConfigured = 0): BuildEvent {
  return {
    kind: 'analyzed',
    targets,
    packagesLoaded,
    targetsConfigured,
    ...(aspectsConfigured > 0 ? { aspectsConfigured } : {}),
    ...(tests === undefined ? {} : { tests }),
  };
}

interface RequestedTarget {
  readonly label: string;
  /** Matched by a wildcard (`//...`, `:all`): incompatible and `manual` targets are skipped. */
  readonly fromWildcard: boolean;
}

/**
 * Target patterns in order, `-pattern` subtracting (Bazel needs `--` before a leading negative
 * pattern, or its options parser rejects it: `Invalid options syntax` — as here). Wildcards match rules
 * only and skip targets tagged `manual`, as `bazel build` does.
 */
function expandTargetPatterns(
  ctx: WorkspaceContext,
  patterns: readonly string[],
  keepGoing: boolean,
  printError: (message: string, pos?: Position) => void,
): { targets: RequestedTarget[]; hadErrors: boolean } {
  const targets = new TargetLoader(ctx.loader, { keepGoing, onError: (message, pos) => printError(message, pos) });
  const resolved = resolveTargetPatterns(patterns, { targets, offset: ctx.offset, excludeManual: true });
  return { targets: resolved.map((r) => ({ label: r.target.label.toString(), fromWildcard: r.fromWildcard })), hadErrors: targets.hadErrors };
}

/** The files `--output_groups` asks for (see requestedOutputGroups). */
function filesToBuild(t: ConfiguredTarget, outputGroups: readonly string[]): FileEntry[] {
  const groups = requestedOutputGroups(outputGroups);
  const seen = new Set<string>();
  const out: FileEntry[] = [];
  for (const g of groups) {
    for (const f of g === 'default' ? t.files : (t.outputGroups.get(g) ?? [])) {
      if (seen.has(f.artifact.execPath)) continue;
      seen.add(f.artifact.execPath);
      out.push(f);
    }
  }
  return out;
}

/**
 * The exec paths the build must produce: the requested targets' files (plus their runfiles for
 * `run`) and the outputs of `alsoNeeded` (kiln test's test actions). Execution runs their producers.
 */
function requestedOutputs(
  targets: readonly ConfiguredTarget[],
  withRunfiles: boolean,
  outputGroups: readonly string[],
  alsoNeeded: readonly Action[],
): string[] {
  const requested = alsoNeeded.flatMap((a) => a.outputs.map((o) => o.execPath));
  for (const t of targets) {
    for (const f of filesToBuild(t, outputGroups)) requested.push(f.artifact.execPath);
    // As Bazel, a top-level executable is built even when its DefaultInfo files leave it out.
    if (t.executable) requested.push(t.executable.artifact.execPath);
    if (withRunfiles) for (const f of t.runfiles) requested.push(f.artifact.execPath);
  }
  return requested;
}

/** The configuration as the Build Event Protocol's `configuration` event describes it. */
function recordedConfiguration(config: BuildConfiguration): RecordedConfiguration {
  const dirs = config.outputDirectories;
  return {
    id: config.id,
    mnemonic: config.mnemonic,
    cpu: config.cpu,
    platformName: config.cpu,
    makeVariables: { COMPILATION_MODE: config.compilationMode, TARGET_CPU: config.cpu, GENDIR: dirs.genfiles, BINDIR: dirs.bin },
  };
}

/** Bazel's target kind: `<rule class> rule`, `source file`, `generated file`, `package group`. */
function targetKindOf(ct: ConfiguredTarget): string {
  switch (ct.target.kind) {
    case 'rule':
      return `${ct.target.ruleClass} rule`;
    case 'source':
      return 'source file';
    case 'generated':
      return 'generated file';
    default:
      return 'package group';
  }
}
