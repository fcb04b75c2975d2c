import { isAbsolute, relative, resolve } from 'node:path';
import {
  Analyzer,
  createConfigurations,
  currentHost,
  LoadedTargetGraph,
  parseBuildOptions,
  platformDeclarationsFrom,
  type Action,
  type BuildConfiguration,
  type BuildOptions,
  type ConfiguredTarget,
  type ConfigurationPair,
} from '../analysis/index.js';
import { ExitCode, formatPosition, isKilnError, UsageError, type Position } from '../core/index.js';
import {
  ActionSpawners,
  executeActions,
  mayUseSandbox,
  OUTPUT_DIR_NAME,
  parseMnemonicStrategy,
  parseStrategyList,
  PlainReporter,
  prepareExecRoot,
  TerminalReporter,
  type ExecutionReporter,
  type ExecutionSummary,
  type StrategyFlags,
} from '../exec/index.js';
import { findWorkspaceRoot, PackageLoader, readWorkspaceName, Workspace } from '../loading/index.js';
import { QueryEngine, TargetPatternError } from '../query/index.js';
import type { CliIO } from './io.js';
import { applyRcFiles } from './rc-file.js';
import { lockOutputBase, outputLayout, updateConvenienceSymlinks, type OutputLayout } from './output-base.js';

/** `--output_base` is a startup option in Bazel (`bazel --output_base=X build`); Kiln takes it after the command too. */
export function takeOutputBaseFlag(args: readonly string[]): { rest: string[]; outputBase?: string } | string {
  const rest: string[] = [];
  let outputBase: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      rest.push(...args.slice(i));
      break;
    }
    if (a === '--output_base') {
      outputBase = args[++i];
      if (outputBase === undefined) return 'Expected value after --output_base';
    } else if (a.startsWith('--output_base=')) outputBase = a.slice('--output_base='.length);
    else rest.push(a);
  }
  return outputBase === undefined ? { rest } : { rest, outputBase };
}

/** The workspace a command runs in, with its loader and output layout. */
export interface WorkspaceContext {
  readonly workspace: Workspace;
  readonly layout: OutputLayout;
  readonly loader: PackageLoader;
  readonly graph: LoadedTargetGraph;
  /** The working directory's path inside the workspace, for relative target patterns. */
  readonly offset: string;
}

export function openWorkspace(io: CliIO, command: string, outputBaseFlag: string | undefined): WorkspaceContext | string {
  const root = findWorkspaceRoot(io.cwd);
  if (root === undefined) {
    return `The '${command}' command is only supported from within a workspace (below a directory having a MODULE.bazel, WORKSPACE or WORKSPACE.bazel file).`;
  }
  const workspace = new Workspace(root, readWorkspaceName(root));
  const layout = outputLayout(root, workspace.name, io.env, io.cwd, outputBaseFlag);
  const loader = new PackageLoader({ workspace, outputBase: layout.outputBase, onEvent: (kind, message) => io.stderr.write(`${kind}: ${message}\n`) });
  const offset = relative(root, io.cwd);
  return {
    workspace,
    layout,
    loader,
    graph: new LoadedTargetGraph(loader),
    offset: offset.startsWith('..') || isAbsolute(offset) ? '' : offset.split('\\').join('/'),
  };
}

export function configurationsFor(ctx: WorkspaceContext, options: BuildOptions): ConfigurationPair {
  return createConfigurations(options, { host: currentHost(), platforms: platformDeclarationsFrom(ctx.graph) });
}

/** `ERROR: path/BUILD:12:8: message`, as Bazel prints loading and analysis errors. */
export function printError(io: CliIO, message: string, pos?: Position): void {
  io.stderr.write(`ERROR: ${pos ? `${pos.col > 0 ? formatPosition(pos) : `${pos.file}:${pos.line}`}: ` : ''}${message}\n`);
}

/** What a finished build hands to `run`: the requested targets as configured. */
export interface BuildResult {
  readonly exitCode: number;
  readonly targets: readonly ConfiguredTarget[];
  readonly ctx?: WorkspaceContext;
}

/**
 * The whole of `kiln build` (and the build half of `kiln run`): flags, workspace, target patterns,
 * loading, analysis, execution of the actions the requested targets' default outputs need,
 * convenience symlinks, Bazel's closing lines. Never throws for user errors.
 */
export async function runBuild(args: readonly string[], io: CliIO, command: 'build' | 'run'): Promise<BuildResult> {
  const spawners = new ActionSpawners(io.env);
  try {
    return await buildWith(args, io, command, spawners);
  } finally {
    await spawners.close();
  }
}

async function buildWith(args: readonly string[], io: CliIO, command: 'build' | 'run', spawners: ActionSpawners): Promise<BuildResult> {
  const startedAt = performance.now();
  const fail = (exitCode: number): BuildResult => ({ exitCode, targets: [] });
  const startup = takeOutputBaseFlag(args);
  if (typeof startup === 'string') {
    printError(io, startup);
    return fail(ExitCode.COMMAND_LINE_ERROR);
  }
  const ctx = openWorkspace(io, command, startup.outputBase);
  if (typeof ctx === 'string') {
    printError(io, ctx);
    return fail(ExitCode.COMMAND_LINE_ERROR);
  }
  let options: BuildOptions;
  let patterns: readonly string[];
  let strategies: StrategyFlags;
  try {
    ({ options, residue: patterns } = parseBuildOptions(applyRcFiles(command, startup.rest, ctx.workspace.root, io.env.HOME)));
    strategies = strategyFlags(options);
  } catch (e) {
    if (e instanceof UsageError) {
      printError(io, e.message);
      return fail(ExitCode.COMMAND_LINE_ERROR);
    }
    throw e;
  }
  if (patterns.length === 0) {
    io.stderr.write(`WARNING: Usage: kiln ${command} <options> <targets>.\nInvoke \`kiln help ${command}\` for full description of usage and options.\n`);
    if (command === 'run') {
      printError(io, 'Must specify a target to run');
      return fail(ExitCode.COMMAND_LINE_ERROR);
    }
  }
  // The processes actions start from come up while loading and analysis run, not on the first action.
  if (options.getBool('build')) spawners.warmUp({ sandbox: mayUseSandbox(strategies) });
  const keepGoing = options.getBool('keep_going');
  const buildFailed = (exitCode: number = ExitCode.BUILD_FAILURE): BuildResult => {
    ctx.loader.flush();
    io.stderr.write(`FAILED: Build did NOT complete successfully\n`);
    return { exitCode, targets: [], ctx };
  };

  // Loading: target patterns to labels.
  let requested: RequestedTarget[];
  let loadingFailed = false;
  try {
    const expanded = expandTargetPatterns(ctx, patterns, keepGoing, io);
    requested = expanded.targets;
    loadingFailed = expanded.hadErrors;
    if (loadingFailed && !keepGoing) return buildFailed();
  } catch (e) {
    if (e instanceof TargetPatternError) {
      printError(io, e.message);
      return buildFailed();
    }
    if (isKilnError(e)) {
      printError(io, e.message, e.pos);
      return buildFailed();
    }
    throw e;
  }
  if (command === 'run' && requested.length !== 1) {
    printError(io, `Only a single target can be run. Your target pattern(s) ${patterns.join(' ')} matched ${requested.length} targets`);
    return buildFailed(ExitCode.COMMAND_LINE_ERROR);
  }

  // Analysis.
  let configurations: ConfigurationPair;
  const configured: ConfiguredTarget[] = [];
  let analysisFailed = false;
  let analyzer: Analyzer;
  try {
    configurations = configurationsFor(ctx, options);
    analyzer = new Analyzer(ctx.graph, {
      configurations,
      buildSettings: (label) => ctx.graph.buildSetting(label),
      warn: (message, pos) => io.stderr.write(`WARNING: ${formatPosition(pos)}: ${message}\n`),
    });
  } catch (e) {
    if (!isKilnError(e)) throw e;
    printError(io, e.message, e.pos);
    return buildFailed();
  }
  for (const t of requested) {
    try {
      const ct = t.fromWildcard ? analyzer.analyzeFromPattern(t.label) : analyzer.analyzeTopLevel(t.label);
      if (ct) configured.push(ct);
    } catch (e) {
      if (!isKilnError(e)) throw e;
      printError(io, e.message, e.pos);
      analysisFailed = true;
      if (!keepGoing) break;
      io.stderr.write(`WARNING: errors encountered while analyzing target '${t.label}': it will not be built\n`);
    }
  }
  if (analysisFailed && !keepGoing) {
    printError(io, 'Analysis of target(s) failed; build aborted');
    return buildFailed();
  }
  // Loading is over: persist the package cache so the next command skips unchanged BUILD files.
  ctx.loader.flush();
  const n = configured.length;
  const plural = n === 1 ? '' : 's';
  io.stderr.write(`INFO: Analyzed ${n} target${plural}.\nINFO: Found ${n} target${plural}...\n`);

  const actions = actionsFor(configured, analyzer.actions(), command === 'run');
  // With --keep_going the build goes on past loading and analysis errors, but still fails.
  const earlierErrors = loadingFailed || analysisFailed;
  if (!options.getBool('build')) {
    if (earlierErrors) return buildFailed();
    io.stderr.write('INFO: Build completed successfully, 0 total actions\n');
    return { exitCode: ExitCode.SUCCESS, targets: configured, ctx };
  }

  // Execution.
  const { layout } = ctx;
  const release = await lockOutputBase(layout.outputBase, (pid) =>
    io.stderr.write(`Another command (pid=${pid}) is using the output base ${layout.outputBase}. Waiting for it to complete...\n`),
  );
  let summary: ExecutionSummary;
  const abort = new AbortController();
  void io.interrupted?.then(() => abort.abort());
  try {
    await prepareExecRoot(layout.workspaceRoot, layout.execRoot);
    const sink = new ClosingLinesSink((text) => void io.stderr.write(text));
    const reporter = new TargetLinesReporter(baseReporter(sink, options, io), configured, configurations.target, earlierErrors, sink, () => (performance.now() - startedAt) / 1000);
    try {
      summary = await executeActions(
        actions,
        {
          execRoot: layout.execRoot,
          outputBase: layout.outputBase,
          clientEnv: io.env,
          ...(options.getInt('jobs') > 0 ? { jobs: options.getInt('jobs') } : {}),
          keepGoing,
          ...(options.getString('disk_cache') ? { diskCache: resolve(io.cwd, options.getString('disk_cache')) } : {}),
          strategies,
          signal: abort.signal,
          spawners,
        },
        reporter,
      );
    } catch (e) {
      if (!isKilnError(e)) throw e;
      printError(io, e.message, e.pos);
      return buildFailed();
    }
    const dirs = configurations.target.outputDirectories;
    await updateConvenienceSymlinks(layout, { bin: dirs.bin, genfiles: dirs.genfiles, testlogs: dirs.testlogs, outputRoot: OUTPUT_DIR_NAME });
  } finally {
    await release();
  }
  if (abort.signal.aborted) return { exitCode: ExitCode.INTERRUPTED, targets: configured, ctx };
  const ok = summary.success && !earlierErrors;
  return { exitCode: ok ? ExitCode.SUCCESS : ExitCode.BUILD_FAILURE, targets: configured, ctx };
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
function expandTargetPatterns(ctx: WorkspaceContext, patterns: readonly string[], keepGoing: boolean, io: CliIO): { targets: RequestedTarget[]; hadErrors: boolean } {
  const engine = new QueryEngine(ctx.loader, { keepGoing, offset: ctx.offset, onError: (message, pos) => printError(io, message, pos) });
  const chosen = new Map<string, RequestedTarget>();
  for (const raw of patterns) {
    const negative = raw.startsWith('-');
    const pattern = negative ? raw.slice(1) : raw;
    if (pattern.includes('"')) throw new TargetPatternError(`invalid target format '${raw}': quotes are not allowed`);
    const single = !/(^|\/)\.\.\.(:|$)|:(all|\*|all-targets)$/.test(pattern);
    for (const t of engine.evaluate(`"${pattern}"`)) {
      const label = t.label.toString();
      if (negative) {
        chosen.delete(label);
        continue;
      }
      if (!single && t.target.kind === 'rule' && isManual(t.target.attrs.get('tags'))) continue;
      if (!chosen.has(label) || single) chosen.set(label, { label, fromWildcard: !single });
    }
  }
  return { targets: [...chosen.values()], hadErrors: engine.hadErrors };
}

function isManual(tags: unknown): boolean {
  return Array.isArray(tags) && tags.includes('manual');
}

/**
 * The actions the requested targets' files need (plus their runfiles for `run`): the producers of
 * those files and, transitively, of every derived input of those producers.
 */
function actionsFor(targets: readonly ConfiguredTarget[], registered: readonly Action[], withRunfiles: boolean): Action[] {
  const producer = new Map<string, Action>();
  for (const a of registered) for (const o of a.outputs) producer.set(o.execPath, a);
  const needed = new Set<Action>();
  const pending: string[] = [];
  for (const t of targets) {
    for (const f of t.files) pending.push(f.artifact.execPath);
    if (withRunfiles) for (const f of t.runfiles) pending.push(f.artifact.execPath);
  }
  while (pending.length > 0) {
    const a = producer.get(pending.pop()!);
    if (!a || needed.has(a)) continue;
    needed.add(a);
    for (const input of a.inputs) if (input.kind === 'derived') pending.push(input.execPath);
  }
  return [...needed];
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
  return flags;
}

function baseReporter(sink: ClosingLinesSink, options: BuildOptions, io: CliIO): ExecutionReporter {
  const verboseFailures = options.getBool('verbose_failures');
  const subcommands = options.getBool('subcommands');
  const stream = io.stderr as { isTTY?: boolean; columns?: number };
  if (stream.isTTY) return new TerminalReporter(sink, { verboseFailures, subcommands, ...(stream.columns ? { columns: stream.columns } : {}) });
  return new PlainReporter(sink, { verboseFailures, subcommands });
}

/**
 * The reporters print the closing summary themselves (after erasing the live status block on a
 * terminal) and have no way to print other lines in between. This sink holds lines the CLI wants
 * right before that summary and writes them just after the erase, so they are neither overdrawn nor
 * erased. (Adapter: exec's reporters could take such lines in buildFinished instead.)
 */
class ClosingLinesSink {
  private pending = '';

  constructor(private readonly out: (text: string) => void) {}

  /** Printed before the next text that is not a cursor movement. */
  beforeNextLine(text: string): void {
    this.pending += text;
  }

  write(text: string): void {
    if (this.pending && !text.startsWith('\r\x1b[')) {
      this.out(this.pending);
      this.pending = '';
    }
    this.out(text);
  }
}

/**
 * Bazel's `--show_result` default: the per-target block is printed only when at most this many
 * targets were requested (a `//...` build stays short).
 */
const SHOW_RESULT = 1;

/**
 * Adds Bazel's `Target //pkg:x up-to-date:` block (with the files as paths through the convenience
 * symlinks) before the closing summary of a successful build.
 */
class TargetLinesReporter implements ExecutionReporter {
  constructor(
    private readonly inner: ExecutionReporter,
    private readonly targets: readonly ConfiguredTarget[],
    private readonly target: BuildConfiguration,
    /** Loading or analysis failed under --keep_going: the build fails whatever execution does. */
    private readonly earlierErrors: boolean,
    private readonly sink: ClosingLinesSink,
    /** Seconds since the command started. */
    private readonly elapsed: () => number,
  ) {}

  buildStarted(total: number): void {
    this.inner.buildStarted(total);
  }
  actionStarted(...args: Parameters<ExecutionReporter['actionStarted']>): void {
    this.inner.actionStarted(...args);
  }
  actionFinished(...args: Parameters<ExecutionReporter['actionFinished']>): void {
    this.inner.actionFinished(...args);
  }
  actionFailed(...args: Parameters<ExecutionReporter['actionFailed']>): void {
    this.inner.actionFailed(...args);
  }
  warning(message: string): void {
    this.inner.warning(message);
  }
  buildFinished(summary: ExecutionSummary): void {
    let text = '';
    if (summary.success && !this.earlierErrors && this.targets.length <= SHOW_RESULT) {
      for (const t of this.targets) {
        if (t.files.length === 0) {
          text += `Target ${t.label} up-to-date (nothing to build)\n`;
          continue;
        }
        text += `Target ${t.label} up-to-date:\n`;
        for (const f of t.files) text += `  ${displayPath(f.artifact.execPath, this.target)}\n`;
      }
    }
    text += `INFO: Elapsed time: ${this.elapsed().toFixed(3)}s\n`;
    this.sink.beforeNextLine(text);
    this.inner.buildFinished(this.earlierErrors ? { ...summary, success: false } : summary);
  }
}

/** `kiln-out/k8-fastbuild/bin/pkg/x` → `kiln-bin/pkg/x` (the path through the convenience symlink). */
export function displayPath(execPath: string, target: BuildConfiguration): string {
  const bin = `${target.outputDirectories.bin}/`;
  if (execPath.startsWith(bin)) return `kiln-bin/${execPath.slice(bin.length)}`;
  const genfiles = `${target.outputDirectories.genfiles}/`;
  if (execPath.startsWith(genfiles)) return `kiln-genfiles/${execPath.slice(genfiles.length)}`;
  return execPath;
}
