import { workspaceStatusValues } from './workspace-status-command.js';
import { Analyzer, LoadedTargetGraph, TargetValue, type BuildOptions, type ConfigurationPair } from '../analysis/index.js';
import { ExitCode, isKilnError, KilnError, UsageError, type Position } from '../core/index.js';
import {
  ACTION_QUERY_FUNCTIONS,
  CONFIGURED_QUERY_FUNCTIONS,
  PackageQueryEnvironment,
  TargetLoader,
  TargetPatternError,
  QuerySyntaxError,
  actionFiltersOf,
  compareLabels,
  evaluateQuery,
  parseQuery,
  resolveTargetPatterns,
  type ActionFilter,
  type AttributeView,
  type ConfigurationLookup,
  type QueryEnvironment,
  type QueryExpr,
} from '../query/index.js';
import { bindUserFlags, configurationsFor } from './analysis-phase.js';
import { analyzeUniverse, ConfiguredGraph, EdgeRecordingMemo, type ConfiguredNode } from './configured-graph.js';
import type { ConfiguredQueryCommand, ConfiguredQueryOptions } from './configured-query-options.js';
import type { WorkspaceContext } from './workspace/index.js';
import { Label } from '../loading/index.js';

export interface ConfiguredQueryRequest {
  readonly command: ConfiguredQueryCommand;
  readonly expression: string;
  /** The build options: the configuration the universe is analysed in, as `kiln build` would. */
  readonly options: BuildOptions;
  readonly query: ConfiguredQueryOptions;
  /** The client's environment (BUILD_USER for stamping). */
  readonly clientEnv: Readonly<Record<string, string | undefined>>;
  /** Receives loading, analysis and query errors and warnings as Bazel words them. */
  readonly onError: (message: string, pos?: Position) => void;
  readonly onWarning: (message: string, pos?: Position) => void;
}

/** What cquery and aquery print from: the matching configured targets and the graph they came from. */
export interface ConfiguredQueryAnswer {
  /** The result, in evaluation order. */
  readonly targets: readonly ConfiguredNode[];
  readonly graph: ConfiguredGraph;
  readonly configurations: ConfigurationPair;
  /** aquery's action filters (`mnemonic`, `inputs`, `outputs`) found in the expression. */
  readonly actionFilters: readonly ActionFilter[];
  /** Loading or analysis failed for part of the universe under --keep_going. */
  readonly hadErrors: boolean;
  /** Absolute path of a display path (workspace-relative or `external/...`), for locations. */
  readonly absolutePath: (displayPath: string) => string;
}

export type ConfiguredQueryOutcome = ConfiguredQueryAnswer | { readonly failed: number };

/** The target patterns an expression names: its universe when --universe_scope is not given (Bazel's cquery). */
function patternsOf(expr: QueryExpr, out: string[] = []): string[] {
  switch (expr.kind) {
    case 'target':
      out.push(expr.text);
      break;
    case 'set':
      for (const w of expr.words) out.push(w.text);
      break;
    case 'let':
      patternsOf(expr.value, out);
      patternsOf(expr.body, out);
      break;
    case 'binary':
      for (const o of expr.operands) patternsOf(o, out);
      break;
    case 'function':
      for (const a of expr.args) if (a.kind === 'expression') patternsOf(a.expr, out);
      break;
    case 'variable':
      break;
  }
  return out;
}

/**
 * cquery's and aquery's work (Bazel's ConfiguredTargetQueryEnvironment and ActionGraphQueryEnvironment):
 * the universe (--universe_scope, else the expression's target patterns) loaded and analysed in the
 * build options' target configuration, with every edge analysis follows (exec configuration for
 * tools, config_settings of select()s); then the expression evaluated over that configured graph,
 * a target pattern standing for every configured instance of its targets.
 */
export function configuredTargetsFor(ctx: WorkspaceContext, request: ConfiguredQueryRequest): ConfiguredQueryOutcome {
  const { onError, query } = request;
  let expr: QueryExpr;
  try {
    expr = parseQuery(request.expression, request.command === 'aquery' ? ACTION_QUERY_FUNCTIONS : CONFIGURED_QUERY_FUNCTIONS);
  } catch (e) {
    if (!(e instanceof QuerySyntaxError)) throw e;
    onError(e.message);
    return { failed: ExitCode.COMMAND_LINE_ERROR };
  }
  const loaded = new LoadedTargetGraph(ctx.loader);
  let options = request.options;
  try {
    const bound = bindUserFlags(loaded, { command: 'build', patterns: [], options, keepGoing: query.keepGoing, clientEnv: request.clientEnv });
    if (bound instanceof KilnError) {
      onError(bound.message);
      return { failed: bound instanceof UsageError ? ExitCode.COMMAND_LINE_ERROR : ExitCode.BUILD_FAILURE };
    }
    options = bound.options;
  } catch (e) {
    if (!isKilnError(e)) throw e;
    onError(`Error loading option: ${e.message}`, e.pos);
    return { failed: ExitCode.BUILD_FAILURE };
  }
  const targets = new TargetLoader(ctx.loader, { keepGoing: query.keepGoing, onError: (m, p) => onError(m, p) });
  const universePatterns = query.universeScope.length > 0 ? query.universeScope : patternsOf(expr);
  let universe: { label: string; fromWildcard: boolean }[];
  try {
    universe = resolveTargetPatterns(universePatterns, { targets, offset: ctx.offset, excludeManual: true }).map((r) => ({
      label: r.target.label.toString(),
      fromWildcard: r.fromWildcard,
    }));
  } catch (e) {
    if (e instanceof TargetPatternError) {
      onError(e.message);
      return { failed: ExitCode.ANALYSIS_FAILURE };
    }
    if (!isKilnError(e)) throw e;
    onError(e.message, e.pos);
    return { failed: ExitCode.BUILD_FAILURE };
  }
  if (targets.hadErrors && !query.keepGoing) return { failed: ExitCode.BUILD_FAILURE };

  let configurations: ConfigurationPair;
  let analyzer: Analyzer;
  const memo = new EdgeRecordingMemo();
  let analysisFailed = false;
  try {
    configurations = configurationsFor(loaded, options);
    analyzer = new Analyzer(loaded, {
      configurations,
      buildSettings: (label) => loaded.buildSetting(label),
      packageLoader: ctx.loader,
      memo,
      warn: (message, pos) => request.onWarning(message, pos),
      workspaceName: ctx.workspace.name || '__main__',
      workspaceStatus: workspaceStatusValues(request.clientEnv),
    });
    analyzeUniverse(analyzer, universe, (label, e) => {
      if (!isKilnError(e)) throw e;
      onError(e.message, e.pos);
      analysisFailed = true;
      if (query.keepGoing) request.onWarning(`errors encountered while analyzing target '${label}': it will not be built`);
      return query.keepGoing;
    });
  } catch (e) {
    if (!isKilnError(e)) throw e;
    onError(e.message, e.pos);
    return { failed: ExitCode.BUILD_FAILURE };
  } finally {
    ctx.loader.flush();
  }
  if (analysisFailed && !query.keepGoing) {
    onError('Analysis of target(s) failed; build aborted');
    return { failed: ExitCode.BUILD_FAILURE };
  }

  const packageEnv = new PackageQueryEnvironment(targets, { offset: ctx.offset });
  const graph = new ConfiguredGraph(memo, (label) => targets.peekTarget(Label.parse(label)) ?? targets.getTarget(Label.parse(label)));
  // config() of a target the universe holds in another configuration only: analysed on demand, as Bazel's is.
  const configure = (label: string, kind: 'target' | 'exec'): void => {
    try {
      analyzer.analyze(label, configurations[kind]);
    } catch (e) {
      if (!isKilnError(e)) throw e;
      return;
    }
    graph.refresh();
  };
  const env = new ConfiguredQueryEnvironment(graph, packageEnv, configurations, query, configure);
  let result: ConfiguredNode[];
  try {
    result = [...evaluateQuery(expr, env, request.command === 'aquery' ? ACTION_QUERY_FUNCTIONS : CONFIGURED_QUERY_FUNCTIONS).values()];
  } catch (e) {
    if (e instanceof TargetPatternError) {
      onError(e.message);
      return { failed: ExitCode.ANALYSIS_FAILURE };
    }
    if (!isKilnError(e)) throw e;
    // Bazel's words and exit code: the query runs after analysis, as part of the build.
    onError(`Error doing post analysis query: Evaluation failed: ${e.message}`, e.pos);
    return { failed: ExitCode.BUILD_FAILURE };
  }
  return {
    targets: result,
    graph,
    configurations,
    actionFilters: request.command === 'aquery' ? actionFiltersOf(expr) : [],
    hadErrors: analysisFailed || targets.hadErrors,
    absolutePath: (p) => (p.startsWith('external/') ? `${ctx.loader.outputBase}/${p}` : `${ctx.workspace.root}/${p}`),
  };
}

/**
 * The query environment over the configured graph: a target is a label in a configuration; its
 * dependencies are the edges analysis followed (--noimplicit_deps leaves out those only an
 * attribute's default names, --notool_deps those into the exec configuration); what only the loaded
 * target knows (kind, attributes, tests of a suite) comes from the package environment.
 */
export class ConfiguredQueryEnvironment implements QueryEnvironment<ConfiguredNode>, ConfigurationLookup<ConfiguredNode> {
  constructor(
    private readonly graph: ConfiguredGraph,
    private readonly packages: PackageQueryEnvironment,
    private readonly configurations: ConfigurationPair,
    private readonly options: Pick<ConfiguredQueryOptions, 'implicitDeps' | 'toolDeps'>,
    private readonly configure: (label: string, kind: 'target' | 'exec') => void = () => {},
  ) {}

  keyOf(t: ConfiguredNode): string {
    return t.key;
  }

  labelOf(t: ConfiguredNode): string {
    return t.label;
  }

  packageOf(t: ConfiguredNode): string {
    return this.packages.packageOf(t.loaded);
  }

  compare(a: ConfiguredNode, b: ConfiguredNode): number {
    return compareLabels(a.loaded.label, b.loaded.label) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  }

  resolvePattern(pattern: string, column: number): ConfiguredNode[] {
    return this.packages.resolvePattern(pattern, column).flatMap((t) => [...this.graph.instances(t.label.toString())]);
  }

  dependencies(t: ConfiguredNode): ConfiguredNode[] {
    const out: ConfiguredNode[] = [];
    for (const e of t.deps) {
      if (!this.options.implicitDeps && e.implicit) continue;
      if (!this.options.toolDeps && e.to.config?.isExec && !t.config?.isExec) continue;
      out.push(e.to);
    }
    return out;
  }

  universe(): ConfiguredNode[] {
    return [...this.graph.nodes.values()];
  }

  kindOf(t: ConfiguredNode): string {
    return this.packages.kindOf(t.loaded);
  }

  isRule(t: ConfiguredNode): boolean {
    return this.packages.isRule(t.loaded);
  }

  isTestRule(t: ConfiguredNode): boolean {
    return this.packages.isTestRule(t.loaded);
  }

  isTestSuite(t: ConfiguredNode): boolean {
    return this.packages.isTestSuite(t.loaded);
  }

  attribute(t: ConfiguredNode, name: string): AttributeView | undefined {
    return this.packages.attribute(t.loaded, name);
  }

  attributeTargets(t: ConfiguredNode, name: string): ConfiguredNode[] {
    const labels = new Set(this.packages.attributeTargets(t.loaded, name).map((d) => d.label.toString()));
    return t.deps.map((e) => e.to).filter((d) => labels.has(d.label));
  }

  implicitTests(suite: ConfiguredNode): ConfiguredNode[] {
    return this.packages.implicitTests(suite.loaded).flatMap((t) => this.graph.instances(t.label.toString()).filter((n) => n.config === suite.config));
  }

  siblings(): ConfiguredNode[] {
    return [];
  }

  buildFile(): ConfiguredNode | undefined {
    return undefined;
  }

  loadedFiles(): ConfiguredNode[] {
    return [];
  }

  isVisible(): boolean {
    return true;
  }

  fail(message: string): void {
    this.packages.fail(message);
  }

  warn(message: string): void {
    this.packages.warn(message);
  }

  inConfiguration(t: ConfiguredNode, config: string): ConfiguredNode | undefined {
    const instances = this.graph.instances(t.label);
    const named = (kind: 'target' | 'exec'): ConfiguredNode | undefined => {
      const id = this.configurations[kind].id;
      const find = () => this.graph.instances(t.label).find((n) => n.config?.id === id) ?? this.sourceAmong(this.graph.instances(t.label));
      const found = find();
      if (found) return found;
      this.configure(t.label, kind);
      return find();
    };
    switch (config) {
      case 'null':
        return instances.find((n) => n.config === undefined);
      case 'target':
        return named('target');
      case 'host':
      case 'exec':
        return named('exec');
      default:
        return instances.find((n) => n.config !== undefined && config.length > 0 && n.config.id.startsWith(config));
    }
  }

  /** A source file is in no configuration: Bazel's config() gives it for any. */
  private sourceAmong(instances: readonly ConfiguredNode[]): ConfiguredNode | undefined {
    return instances.find((n) => n.config === undefined);
  }
}

/** The configured target as cquery's `--output=starlark` binds it to `target`. */
export function starlarkTargetValue(node: ConfiguredNode): TargetValue {
  return new TargetValue(node.configured);
}
