import { KilnError, type Position } from '../../core/index.js';
import {
  ANALYSIS_FAILURE_INFO,
  BUILD_SETTING_RULE_CLASSES,
  depsetOf,
  CONSTRAINT_SETTING_INFO,
  CONSTRAINT_VALUE_INFO,
  Label,
  ProviderInstance,
  StarLabel,
  type PackageLoader,
} from '../../loading/index.js';
import type { BuildConfiguration, ConfigurationPair } from '../config/build-configuration.js';
import type { BuildSettingLookup, ConfigMatch } from '../config/config-matching.js';
import { resolveSelect } from '../config/select.js';
import type { JavaRuntimeVariables } from '../expansion/genrule-command.js';
import { analyzeConfigSetting } from '../rules/config-setting.js';
import { analyzeFilegroup } from '../rules/filegroup.js';
import { analyzeGenquery } from '../rules/genquery.js';
import { analyzeGenrule } from '../rules/genrule.js';
import { analyzeStarlarkDocExtract, type StarlarkModules } from '../rules/starlark-doc-extract.js';
import type { RuleResult } from '../rules/rule-result.js';
import { analyzeShExecutable, analyzeShLibrary } from '../rules/sh-rules.js';
import { analyzeCcExecutable, analyzeCcLibrary } from '../rules/cc-rules.js';
import { analyzeStarlarkRule } from '../rules/starlark-rule.js';
import { workspaceStatus, type WorkspaceStatus, type WorkspaceStatusValues } from '../starlark/workspace-status.js';
import { userFlagValue, type BuildSettingValue } from '../options/user-defined-flag.js';
import { None, StarList, type Value } from '../../starlark/index.js';
import type { AnalysisTarget, ConfiguredTarget, FileEntry, RuleAnalysisTarget, TargetGraph } from './configured-target.js';
import { ruleError, type RuleContext, type ToolchainContext } from './rule-context.js';
import { ToolchainResolver } from './toolchain-context.js';
import { canonicalizeIn, packageKeyOf, packageOutputDir, rootPathOf, siblingLabel, sourceExecPath, targetNameOf } from './target-paths.js';
import { constraintValueOf } from './platform-declarations.js';
import { isVisible } from './visibility.js';
import { AspectAnalyzer, type AspectMemo } from '../aspects/aspect-analyzer.js';
import { ConfigurationTransitions } from '../transitions/configuration-transitions.js';
import { allowsAnalysisFailures, analysisFailureInfo, DependencyAnalysisFailed, failureCausesOf } from '../testing/analysis-failure.js';

export interface AnalyzerOptions {
  readonly configurations: ConfigurationPair;
  /** Receives warnings (deprecated dependencies), Bazel style, with the depending rule's position. */
  readonly warn?: (message: string, pos: Position) => void;
  readonly buildSettings?: BuildSettingLookup;
  /** The exec configuration's Java runtime, for $(JAVA) and friends. */
  readonly javaRuntime?: JavaRuntimeVariables;
  /** The main repository's name, `ctx.workspace_name` (Bazel's default: `__main__`). */
  readonly workspaceName?: string;
  /** The workspace status (`ctx.info_file`, `ctx.version_file`): BUILD_HOST, BUILD_USER, BUILD_TIMESTAMP... */
  readonly workspaceStatus?: WorkspaceStatusValues;
  /** `print()` of rule implementations, with where it was called (`file:line:col`). */
  readonly debug?: (message: string, where: string) => void;
  /** Informational messages (`--toolchain_resolution_debug`), printed as Bazel's `INFO: ` lines. */
  readonly info?: (message: string) => void;
  /** Loads packages for genquery, which runs a query over its scope during analysis. */
  readonly packageLoader?: PackageLoader;
  /**
   * Where configured targets may come from besides computing them: incremental analysis, which
   * keeps them in the output base and reuses those whose inputs did not change.
   */
  readonly memo?: ConfiguredTargetMemo;
}

/** What a memo may ask of the analyzer it serves. */
export interface AnalyzerHooks {
  /** Analyses (label, configuration) now, its dependencies through the memo. */
  compute(label: string, config: BuildConfiguration): ConfiguredTarget;
  /** Takes a configured target the memo reused as if analysed in this run. */
  adopt(ct: ConfiguredTarget): void;
}

/** A source of configured targets that has the analyzer compute one only when it must. */
export interface ConfiguredTargetMemo extends Partial<AspectMemo> {
  attach(analyzer: AnalyzerHooks): void;
  configured(label: string, config: BuildConfiguration): ConfiguredTarget;
  /** The configured target being computed read something that changes every build (the workspace status): never reuse it. */
  readVolatile(): void;
}

type RuleImplementation = (ctx: RuleContext) => RuleResult;

/** bazel_skylib's provider of a build setting's value. */
const BUILD_SETTING_INFO = '@bazel_skylib//rules:common_settings.bzl%BuildSettingInfo';

/** Rules analysis implements, by class. Rules that only carry data for others provide nothing. */
const RULES: Readonly<Record<string, RuleImplementation>> = {
  filegroup: analyzeFilegroup,
  genrule: analyzeGenrule,
  genquery: analyzeGenquery,
  config_setting: analyzeConfigSetting,
  sh_library: analyzeShLibrary,
  sh_binary: analyzeShExecutable,
  sh_test: analyzeShExecutable,
  cc_library: analyzeCcLibrary,
  cc_binary: analyzeCcExecutable,
  cc_test: analyzeCcExecutable,
  constraint_setting: () => ({ files: [], runfiles: [] }),
  constraint_value: constraintValueProviders,
  platform: () => ({ files: [], runfiles: [] }),
  // Data for toolchain resolution, which reads the targets themselves.
  toolchain_type: () => ({ files: [], runfiles: [] }),
  toolchain: () => ({ files: [], runfiles: [] }),
  test_suite: () => ({ files: [], runfiles: [] }),
};

/** Thrown inside a rule's analysis when it, or a dependency, is incompatible with the platform. */
class Incompatible extends Error {
  constructor(readonly chain: readonly string[]) {
    super('incompatible target');
  }
}

const PUBLIC = ['//visibility:public'];
const PRIVATE = ['//visibility:private'];

/** Marks a (label, configuration) whose analysis has begun and not ended: meeting it again is a cycle. */
const IN_PROGRESS = Symbol('in progress');

/**
 * Turns targets into configured targets: resolves select() per configuration, analyses
 * dependencies in the configuration their attribute asks for (tools: exec), checks visibility
 * and testonly on every dependency edge, and memoises by (label, configuration).
 */
export class Analyzer {
  /** Configured targets by configuration id, then label (no key string is built per lookup); IN_PROGRESS while analysed. */
  private readonly done = new Map<string, Map<string, ConfiguredTarget | typeof IN_PROGRESS>>();
  /** Every configured target, in the order its analysis finished. */
  private readonly completed: ConfiguredTarget[] = [];
  /** The targets being analysed, outermost first: the path a cycle is reported with. */
  private readonly inProgress: { readonly label: string; readonly configId: string }[] = [];
  /** Made when a rule first asks for `ctx.info_file` or `ctx.version_file`. */
  private status: WorkspaceStatus | undefined;
  private computedCount = 0;
  private readonly toolchainResolver: ToolchainResolver;
  /** Aspects applied through attributes (`attr.label(aspects = ...)`) and from the command line. */
  readonly aspects: AspectAnalyzer;
  /** Rule (`cfg`) and attribute transitions, and the configurations they make. */
  private readonly transitions: ConfigurationTransitions;

  constructor(
    private readonly graph: TargetGraph,
    private readonly options: AnalyzerOptions,
  ) {
    this.toolchainResolver = new ToolchainResolver(graph, {
      analyze: (label, config) => this.analyze(label, config),
      info: (message) => options.info?.(message),
    });
    this.transitions = new ConfigurationTransitions(graph, options.configurations, {
      ...(options.buildSettings ? { buildSettings: options.buildSettings } : {}),
      debug: (message, where) => options.debug?.(message, where),
      attr: (target, config) => this.contextFor(target, config).attr,
    });
    options.memo?.attach({ compute: (label, config) => this.compute(label, config), adopt: (ct) => this.adopt(ct) });
    const memo = options.memo;
    this.aspects = new AspectAnalyzer({
      graph,
      analyze: (label, config) => this.analyze(label, config),
      contextFor: (target, config) => this.contextFor(target, config, false),
      resolveToolchains: (target, config, requests) => this.toolchainResolver.resolve(target, config, this.hostPlatformOf(config), requests, []),
      workspaceName: options.workspaceName ?? '__main__',
      debug: (message, where) => options.debug?.(message, where),
      ...(memo?.aspectValue ? { memo: { aspectValue: (id, compute) => memo.aspectValue!(id, compute) } } : {}),
    });
  }

  /** Analyses a target named on the command line: an incompatible one is an error. */
  analyzeTopLevel(label: string): ConfiguredTarget {
    const ct = this.analyze(label, this.options.configurations.target);
    if (ct.incompatible) {
      throw new KilnError(
        `Target ${label} is incompatible and cannot be built, but was explicitly requested.\nDependency chain:\n    ${ct.incompatible.join('\n    ')}`,
      );
    }
    return ct;
  }

  /** Analyses a target matched by a wildcard pattern: incompatible targets are skipped (undefined). */
  analyzeFromPattern(label: string): ConfiguredTarget | undefined {
    const ct = this.analyze(label, this.options.configurations.target);
    return ct.incompatible ? undefined : ct;
  }

  analyze(label: string, requested: BuildConfiguration): ConfiguredTarget {
    // A rule's own transition (`rule(cfg = ...)`) comes first: it is part of the key, as in Bazel.
    const config = this.transitions.incoming(label, requested);
    const done = this.doneIn(config);
    const cached = done.get(label);
    if (cached === IN_PROGRESS) throw this.cycleError(this.inProgress.findIndex((p) => p.label === label && p.configId === config.id));
    const { memo } = this.options;
    // Through the memo even when known: a dependent being computed records the dependency there.
    if (memo) return memo.configured(label, config);
    return cached ?? this.compute(label, config);
  }

  /**
   * Takes a configured target the memo reused (decoded from the output base) as if analysed in this
   * run: its dependents see it, and its actions are the build's. Idempotent.
   */
  adopt(ct: ConfiguredTarget): void {
    const done = this.doneIn(ct.config);
    if (done.get(ct.label) !== undefined) return;
    done.set(ct.label, ct);
    this.completed.push(ct);
  }

  private doneIn(config: BuildConfiguration): Map<string, ConfiguredTarget | typeof IN_PROGRESS> {
    let done = this.done.get(config.id);
    if (!done) this.done.set(config.id, (done = new Map()));
    return done;
  }

  /** Analyses one (label, configuration) now, its dependencies through `analyze`. */
  private compute(label: string, config: BuildConfiguration): ConfiguredTarget {
    const done = this.doneIn(config);
    const known = done.get(label);
    if (known === IN_PROGRESS) throw this.cycleError(this.inProgress.findIndex((p) => p.label === label && p.configId === config.id));
    if (known) return known;
    const target = this.graph.target(label);
    if (!target) throw new KilnError(`no such target '${label}'`);
    done.set(label, IN_PROGRESS);
    this.inProgress.push({ label, configId: config.id });
    try {
      const result = this.analyzeOrFail(target, config);
      done.set(label, result);
      this.completed.push(result);
      this.computedCount++;
      return result;
    } finally {
      this.inProgress.pop();
      if (done.get(label) === IN_PROGRESS) done.delete(label);
    }
  }

  /**
   * Bazel's report of a dependency cycle, at the target where it closes: the path from the
   * requested target to the cycle, then the cycle drawn with `.->`, `|` and `` `-- ``.
   */
  private cycleError(start: number): KilnError {
    const labels = this.inProgress.map((p) => p.label);
    const lines = [
      ...labels.slice(0, start).map((l) => `    ${l}`),
      `.-> ${labels[start]!}`,
      ...labels.slice(start + 1).map((l) => `|   ${l}`),
      `\`-- ${labels[start]!}`,
    ];
    const message = `cycle in dependency graph:\n${lines.join('\n')}`;
    const target = this.graph.target(labels[start]!);
    if (target?.kind === 'rule') return ruleError(target, undefined, message);
    return new KilnError(message, target?.location);
  }

  /** How many (target, configuration) pairs were analysed in this run (not reused): Bazel's "targets configured". */
  get configuredCount(): number {
    return this.computedCount;
  }

  /** Every action registered by the targets analysed so far. */
  actions(): ConfiguredTarget['actions'] {
    return [...this.completed.flatMap((ct) => ct.actions), ...this.aspects.actions(), ...(this.status?.actions ?? [])];
  }

  /** A rule target that provides nothing (incompatible, or failed under --allow_analysis_failures). */
  private emptyConfiguredTarget(target: RuleAnalysisTarget, config: BuildConfiguration): ConfiguredTarget {
    return {
      label: target.label,
      target,
      config,
      files: [],
      runfiles: [],
      outputGroups: new Map(),
      visibility: this.visibilityOf(target),
      testonly: this.testonlyOf(target),
      kindName: target.ruleClass,
      actions: [],
    };
  }

  /**
   * Under --allow_analysis_failures a rule whose analysis fails (or whose dependency's did) is a
   * configured target with AnalysisFailureInfo instead of an error, as Bazel's ConfiguredTargetFunction
   * makes it, so an analysis test can assert on the failure.
   */
  private analyzeOrFail(target: AnalysisTarget, config: BuildConfiguration): ConfiguredTarget {
    try {
      return this.analyzeTarget(target, config);
    } catch (e) {
      if (!(e instanceof KilnError || e instanceof DependencyAnalysisFailed) || target.kind !== 'rule') throw e;
      if (allowsAnalysisFailures(config)) {
        return { ...this.emptyConfiguredTarget(target, config), providers: new Map([[ANALYSIS_FAILURE_INFO.key, analysisFailureInfo(target.label, e)]]) };
      }
      if (e instanceof DependencyAnalysisFailed) {
        const first = e.causes.toList()[0] as { label?: string; message?: string } | undefined;
        throw ruleError(target, undefined, `dependency '${first?.label ?? '?'}' failed analysis: ${first?.message ?? ''}`);
      }
      throw e;
    }
  }

  private analyzeTarget(target: AnalysisTarget, config: BuildConfiguration): ConfiguredTarget {
    const base = { label: target.label, target, config, outputGroups: new Map(), actions: [] };
    switch (target.kind) {
      case 'source': {
        const file: FileEntry = {
          artifact: { kind: 'source', execPath: sourceExecPath(target.label) },
          rootPath: rootPathOf(target.label),
          label: target.label,
        };
        return { ...base, files: [file], runfiles: [], visibility: target.visibility ?? PUBLIC, testonly: false, kindName: 'source file' };
      }
      case 'generated': {
        const rule = this.analyze(target.generatingRule, config);
        if (rule.incompatible) {
          return {
            ...base,
            files: [],
            runfiles: [],
            visibility: rule.visibility,
            testonly: rule.testonly,
            kindName: 'generated file',
            incompatible: rule.incompatible,
          };
        }
        if (failureCausesOf(rule.providers)) {
          return {
            ...base,
            files: [],
            runfiles: [],
            visibility: rule.visibility,
            testonly: rule.testonly,
            kindName: 'generated file',
            providers: rule.providers!,
          };
        }
        const name = targetNameOf(target.label);
        const index = rule.target.kind === 'rule' ? rule.target.outputs.indexOf(name) : -1;
        // An output that is not a default file (starlark_doc_extract's .textproto) is found among the
        // outputs of the rule's actions.
        const file =
          rule.files[index] ??
          rule.actions
            .flatMap((a) => a.outputs)
            .map((artifact): FileEntry => ({ artifact, rootPath: rootPathOf(target.label) }))
            .find((f) => f.artifact.execPath.endsWith(`/${sourceExecPath(target.label)}`));
        if (!file) throw new KilnError(`generated file '${target.label}' is not an output of ${target.generatingRule}`);
        return { ...base, files: [file], runfiles: [], visibility: rule.visibility, testonly: rule.testonly, kindName: 'generated file' };
      }
      case 'package_group':
        return { ...base, files: [], runfiles: [], visibility: PUBLIC, testonly: false, kindName: 'package group' };
      case 'rule':
        if (target.ruleClass === 'alias') return this.analyzeAlias(target, config);
        if (target.ruleClass === 'label_flag' || target.ruleClass === 'label_setting') return this.analyzeLabelSetting(target, config);
        return this.analyzeRule(target, config);
    }
  }

  private analyzeRule(target: RuleAnalysisTarget, config: BuildConfiguration): ConfiguredTarget {
    const impl =
      target.ruleDefinition !== undefined
        ? this.starlarkImplementation(target)
        : target.ruleClass === 'starlark_doc_extract'
          ? (ctx: RuleContext) => analyzeStarlarkDocExtract(ctx, this.starlarkModules())
          : BUILD_SETTING_RULE_CLASSES.has(target.ruleClass)
            ? (ctx: RuleContext) => this.nativeBuildSetting(ctx)
            : RULES[target.ruleClass];
    if (!impl) throw ruleError(target, undefined, `analysis of '${target.ruleClass}' rules is not supported`);
    const ctx = this.contextFor(target, config);
    let result: RuleResult;
    try {
      const unmet = this.unmetConstraint(ctx);
      if (unmet !== undefined) throw new Incompatible([`${target.label}   <-- target platform (${config.platform.label}) didn't satisfy constraint ${unmet}`]);
      // Resolution errors (no toolchain, no execution platform) are the target's even when it reads neither.
      if (target.ruleDefinition !== undefined || target.ruleClass === 'genrule') {
        ctx.toolchainContext();
        for (const name of ctx.execGroupNames) ctx.execGroupContext(name);
      }
      result = impl(ctx);
    } catch (e) {
      if (!(e instanceof Incompatible)) throw e;
      // Bazel skips the implementation of an incompatible target; it provides nothing.
      return { ...this.emptyConfiguredTarget(target, config), incompatible: e.chain };
    }
    return {
      label: target.label,
      target,
      config,
      files: result.files,
      runfiles: result.runfiles,
      outputGroups: result.outputGroups ?? new Map(),
      ...(result.configMatch ? { configMatch: result.configMatch } : {}),
      ...(result.templateVariables ? { templateVariables: result.templateVariables } : {}),
      ...(result.runEnvironment ? { runEnvironment: result.runEnvironment } : {}),
      visibility: this.visibilityOf(target),
      testonly: this.testonlyOf(target),
      kindName: target.ruleClass,
      actions: result.actions ?? [],
      ...(result.providers ? { providers: result.providers } : {}),
      ...(result.executable ? { executable: result.executable } : {}),
      ...(result.cc ? { cc: result.cc } : {}),
    };
  }

  /** What starlark_doc_extract reads: loading's evaluated modules and the main repository's name. */
  private starlarkModules(): StarlarkModules {
    const graph = this.graph;
    return {
      module: (label) => {
        if (!graph.bzlModule) throw new KilnError('starlark_doc_extract needs evaluated .bzl modules, which this target graph does not provide');
        return graph.bzlModule(label);
      },
      moduleAt: (path) => graph.bzlModuleAt?.(path),
      mainRepoName: this.options.workspaceName ?? '',
    };
  }

  /**
   * The native skylib-style settings (`string_flag` & co. without a load): no files, and skylib's
   * BuildSettingInfo with the value in this configuration, as the Starlark ones provide.
   */
  private nativeBuildSetting(ctx: RuleContext): RuleResult {
    const def = this.options.buildSettings?.(ctx.target.label);
    const provider = this.graph.starlarkProvider?.(BUILD_SETTING_INFO);
    if (!def || !provider) return { files: [], runfiles: [] };
    const value = buildSettingStarlarkValue(userFlagValue(def, ctx.config.options.userFlags.get(ctx.target.label)));
    return { files: [], runfiles: [], providers: new Map([[provider.key, provider.instantiate([], [['value', value]])]]) };
  }

  /** A Starlark rule's analysis: its implementation function, run with `ctx`. */
  private starlarkImplementation(target: RuleAnalysisTarget): RuleImplementation {
    const rule = this.graph.starlarkRule?.(target.ruleDefinition!);
    if (!rule?.ruleClass) throw ruleError(target, undefined, `rule class '${target.ruleDefinition}' is not defined`);
    return (ctx) => {
      const setting = rule.ruleClass!.starlark?.buildSetting;
      const def = setting ? this.options.buildSettings?.(target.label) : undefined;
      return analyzeStarlarkRule(ctx, {
        rule,
        workspaceName: this.options.workspaceName ?? '__main__',
        ...(def ? { buildSettingValue: buildSettingStarlarkValue(userFlagValue(def, ctx.config.options.userFlags.get(target.label))) } : {}),
        debug: (message, where) => this.options.debug?.(message, where),
        workspaceStatus: () => {
          this.options.memo?.readVolatile();
          const root = ctx.config.outputDirectories.root;
          this.status ??= workspaceStatus(
            root.slice(0, root.lastIndexOf('/')),
            this.options.workspaceStatus ?? { stable: new Map([['BUILD_EMBED_LABEL', '']]), volatile: new Map() },
          );
          return this.status;
        },
      });
    };
  }

  /** alias (spec, alias): the actual's providers and testonly, the alias's own visibility. */
  private analyzeAlias(target: RuleAnalysisTarget, config: BuildConfiguration): ConfiguredTarget {
    const ctx = this.contextFor(target, config);
    let actual: ConfiguredTarget | undefined;
    try {
      [actual] = ctx.deps('actual', { configurable: true, skipTestonly: true });
    } catch (e) {
      if (!(e instanceof Incompatible)) throw e;
      return {
        label: target.label,
        target,
        config,
        files: [],
        runfiles: [],
        outputGroups: new Map(),
        actions: [],
        visibility: this.visibilityOf(target),
        testonly: false,
        kindName: 'alias',
        incompatible: e.chain,
      };
    }
    if (!actual) throw ctx.error('actual', 'missing value for mandatory attribute');
    if (actual.kindName === 'test_suite' || actual.kindName === 'package group') {
      const what = actual.kindName === 'test_suite' ? 'test_suite rule' : 'package group';
      throw ctx.error('actual', `${what} '${actual.label}' cannot be aliased`);
    }
    return { ...actual, label: target.label, target, actions: [], visibility: this.visibilityOf(target) };
  }

  /** label_flag / label_setting: the providers of the target its value (command line, else default) names. */
  private analyzeLabelSetting(target: RuleAnalysisTarget, config: BuildConfiguration): ConfiguredTarget {
    const ctx = this.contextFor(target, config);
    const fallback = target.attrs.get('build_setting_default') as string;
    const def = { label: target.label, type: 'label' as const, defaultValue: fallback, isFlag: target.ruleClass === 'label_flag' };
    const value = userFlagValue(def, config.options.userFlags.get(target.label)) as string;
    if (!this.graph.target(value)) throw ctx.error('build_setting_default', `no such target '${value}'`);
    const actual = this.analyze(value, config);
    this.checkEdge(ctx, 'build_setting_default', actual, true);
    return { ...actual, label: target.label, target, actions: [], visibility: this.visibilityOf(target), kindName: target.ruleClass };
  }

  /** `warnEdges`: false for a second look at a rule's dependencies (an aspect's ctx.rule), whose edges warned once already. */
  private contextFor(target: RuleAnalysisTarget, config: BuildConfiguration, warnEdges = true): RuleContext {
    const execConfig = this.transitions.execConfiguration(config);
    const canonicalize = (raw: string) => canonicalizeIn(target.label, raw);
    const matchCondition = (condition: string): ConfigMatch => {
      const setting = this.analyze(condition, config);
      if (!setting.configMatch) {
        throw new KilnError(`${condition} is not a valid select() condition for ${target.label}.`, target.location);
      }
      return setting.configMatch;
    };
    const attr = <T>(name: string, fallback: T, configurable = true): T => {
      const raw = target.attrs.get(name);
      if (raw === undefined || raw === null) return fallback;
      return resolveSelect(
        raw as T,
        { ruleLabel: target.label, attribute: name, configurable, pos: target.location, canonicalizeCondition: (c) => canonicalize(c) ?? c },
        matchCondition,
      );
    };
    let outputPaths: OutputPaths | undefined;
    let toolchainContext: ToolchainContext | undefined;
    const rule = target.ruleDefinition !== undefined ? this.graph.starlarkRule?.(target.ruleDefinition)?.ruleClass?.starlark : undefined;
    const execGroups = new Map((rule?.execGroups ?? []).map((g) => [g.name, g]));
    const execGroupContexts = new Map<string, ToolchainContext>();
    const ctx: RuleContext = {
      target,
      config,
      execConfig,
      ...(this.options.buildSettings ? { buildSettings: this.options.buildSettings } : {}),
      ...(this.options.javaRuntime ? { javaRuntime: this.options.javaRuntime } : {}),
      ...(this.options.packageLoader ? { packageLoader: this.options.packageLoader } : {}),
      warn: (message) => this.options.warn?.(message, target.location),
      attr,
      canonicalize,
      error: (attribute, message) => ruleError(target, attribute, message),
      transition: (transition) => this.transitions.outgoing(transition, target, config, ctx),
      toolchainContext: () => (toolchainContext ??= this.resolveToolchains(target, config, ctx)),
      applyAspects: (deps, aspects) => this.aspects.applyToDependencies(deps, aspects, ctx),
      execGroupNames: [...execGroups.keys()],
      execGroupContext: (name) => {
        const group = execGroups.get(name);
        if (!group) return undefined;
        let context = execGroupContexts.get(name);
        if (!context) {
          const own = ctx.attr<readonly (readonly [string, readonly string[]])[]>('exec_group_compatible_with', [], false).find(([n]) => n === name)?.[1] ?? [];
          const constraints = [...group.execCompatibleWith, ...own.map((raw) => ctx.canonicalize(raw) ?? raw)];
          context = this.toolchainResolver.resolve(target, config, this.hostPlatformOf(config), group.toolchains, constraints);
          execGroupContexts.set(name, context);
        }
        return context;
      },
      execProperties: (group) => {
        const platform = (group === undefined ? ctx.toolchainContext() : ctx.execGroupContext(group))!.executionPlatform;
        const own = ctx.attr<readonly (readonly [string, string])[]>('exec_properties', [], true);
        const groupOf = (key: string) => {
          const dot = key.indexOf('.');
          return dot > 0 && execGroups.has(key.slice(0, dot)) ? key.slice(0, dot) : undefined;
        };
        return [
          ...platform.execProperties,
          ...own.filter(([k]) => groupOf(k) === undefined),
          ...(group === undefined ? [] : own.filter(([k]) => groupOf(k) === group).map(([k, v]) => [k.slice(group.length + 1), v] as const)),
        ];
      },
      outputFile: (name, toBindir) => {
        const dirs = config.outputDirectories;
        const root = toBindir ? dirs.bin : dirs.genfiles;
        const paths = (outputPaths ??= outputPathsOf(target.label, dirs));
        return {
          artifact: { kind: 'derived', execPath: `${toBindir ? paths.binDir : paths.genfilesDir}/${name}`, root, owner: target.label },
          rootPath: `${paths.rootPrefix}${name}`,
        };
      },
      deps: (attribute, opts = {}) => {
        const value = attr<unknown>(attribute, opts.fallback ?? [], opts.configurable ?? true);
        // label, label_list, or label_keyed_string_dict ([label, string] pairs).
        const labels =
          typeof value === 'string'
            ? [value]
            : Array.isArray(value)
              ? (value as unknown[]).map((v) => (Array.isArray(v) ? (v[0] as string) : (v as string)))
              : [];
        const depConfig = opts.config ?? (opts.exec ? execConfig : config);
        const skipTestonly = opts.skipTestonly === true;
        const deps = labels.map((raw) => {
          const label = canonicalize(raw);
          if (label === undefined) throw ctx.error(attribute, `invalid label '${raw}'`);
          if (!this.graph.target(label)) throw ctx.error(attribute, `no such target '${label}'`);
          const dep = this.analyze(label, depConfig);
          this.checkEdge(ctx, attribute, dep, skipTestonly, warnEdges);
          return dep;
        });
        // A dependency that failed analysis fails this target too, with its causes; an analysis test reads them instead.
        const failed = deps.map((d) => failureCausesOf(d.providers)).filter((c) => c !== undefined);
        if (failed.length > 0 && !this.isAnalysisTest(target)) throw new DependencyAnalysisFailed(depsetOf([], failed));
        return deps;
      },
    };
    return ctx;
  }

  /**
   * Toolchain resolution for a rule target: the types its rule asks for (`rule(toolchains = ...)`), its
   * execution platform narrowed by the rule's and the target's `exec_compatible_with`.
   */
  private resolveToolchains(target: RuleAnalysisTarget, config: BuildConfiguration, ctx: RuleContext): ToolchainContext {
    const info = target.ruleDefinition !== undefined ? this.graph.starlarkRule?.(target.ruleDefinition)?.ruleClass?.starlark : undefined;
    const execConstraints = [
      ...(info?.execCompatibleWith ?? []),
      ...ctx.attr<readonly string[]>('exec_compatible_with', [], false).map((raw) => ctx.canonicalize(raw) ?? raw),
    ];
    return this.toolchainResolver.resolve(target, config, this.hostPlatformOf(config), info?.toolchains ?? [], execConstraints);
  }

  /** The last execution platform candidate: the exec configuration's (the host platform, or --host_platform). */
  private hostPlatformOf(config: BuildConfiguration) {
    return (config.isExec ? config : this.options.configurations.exec).platform;
  }

  /** The first target_compatible_with constraint value the configuration's platform lacks. */
  private unmetConstraint(ctx: RuleContext): string | undefined {
    for (const raw of ctx.attr<readonly string[]>('target_compatible_with', [], true)) {
      const label = ctx.canonicalize(raw) ?? raw;
      const value = constraintValueOf(this.graph, label);
      if (!value) throw ctx.error('target_compatible_with', `'${label}' does not have mandatory providers: 'ConstraintValueInfo'`);
      if (!ctx.config.platform.has(value)) return label;
    }
    return undefined;
  }

  private checkEdge(ctx: RuleContext, attribute: string, dep: ConfiguredTarget, skipTestonly: boolean, warn = true): void {
    const from = ctx.target;
    if (dep.incompatible) throw new Incompatible([from.label, ...dep.incompatible]);
    const deprecation = dep.target.kind === 'rule' ? dep.target.attrs.get('deprecation') : undefined;
    // Like Bazel: no warning inside one package, nor when the depending target is deprecated itself.
    const fromDeprecated = typeof from.attrs.get('deprecation') === 'string' && from.attrs.get('deprecation') !== '';
    if (typeof deprecation === 'string' && deprecation !== '' && !fromDeprecated && packageKeyOf(dep.label) !== packageKeyOf(from.label)) {
      if (warn) this.options.warn?.(`target '${from.label}' depends on deprecated target '${dep.label}': ${deprecation}`, from.location);
    }
    // An allowlist attribute (`_allowlist_function_transition`, Bazel's `$allowlist_*`) names a package group.
    if (dep.kindName === 'package group' && !/^[_$]allowlist_/.test(attribute)) {
      throw ctx.error(attribute, `package group '${dep.label}' is misplaced here (they are only allowed in the visibility attribute)`);
    }
    const checkVisibility = ctx.config.options.getBool('check_visibility');
    if (checkVisibility && !isVisible(dep.label, dep.visibility, from.label, this.graph)) {
      throw ctx.error(
        attribute,
        `target '${dep.label}' is not visible from target '${from.label}'. Check the visibility declaration of the former target if you think the dependency is legitimate`,
      );
    }
    if (!skipTestonly && dep.testonly && !this.testonlyOf(from)) {
      throw ctx.error(attribute, `non-test target '${from.label}' depends on testonly target '${dep.label}' and doesn't have testonly attribute set`);
    }
  }

  private isAnalysisTest(target: RuleAnalysisTarget): boolean {
    return target.ruleDefinition !== undefined && this.graph.starlarkRule?.(target.ruleDefinition)?.ruleClass?.starlark?.analysisTest === true;
  }

  private visibilityOf(target: RuleAnalysisTarget): readonly string[] {
    const own = target.attrs.get('visibility');
    if (Array.isArray(own)) return own as string[];
    return this.graph.defaultVisibility?.(target.label) ?? PRIVATE;
  }

  private testonlyOf(target: AnalysisTarget): boolean {
    if (target.kind !== 'rule') return false;
    const own = target.attrs.get('testonly');
    if (typeof own === 'boolean') return own;
    // Test rules are testonly by definition.
    if (target.ruleClass.endsWith('_test')) return true;
    return this.graph.defaultTestonly?.(target.label) ?? false;
  }
}

/** Where a rule's outputs go: its package's directories under bin and genfiles, and its runfiles path prefix. */
interface OutputPaths {
  readonly binDir: string;
  readonly genfilesDir: string;
  readonly rootPrefix: string;
}

function outputPathsOf(label: string, dirs: BuildConfiguration['outputDirectories']): OutputPaths {
  const somePath = rootPathOf(siblingLabel(label, '_'));
  return { binDir: packageOutputDir(dirs.bin, label), genfilesDir: packageOutputDir(dirs.genfiles, label), rootPrefix: somePath.slice(0, -1) };
}

/** constraint_value: ConstraintValueInfo (`label`, `constraint`: the setting's ConstraintSettingInfo), for `ctx.target_platform_has_constraint`. */
function constraintValueProviders(ctx: RuleContext): RuleResult {
  const raw = ctx.attr<string>('constraint_setting', '', false);
  const setting = ctx.canonicalize(raw) ?? raw;
  const settingInfo = new ProviderInstance(CONSTRAINT_SETTING_INFO, [
    ['label', new StarLabel(Label.parse(setting))],
    ['default_constraint_value', None],
    ['has_default_constraint_value', false],
  ]);
  const info = new ProviderInstance(CONSTRAINT_VALUE_INFO, [
    ['label', new StarLabel(Label.parse(ctx.target.label))],
    ['constraint', settingInfo],
  ]);
  return { files: [], runfiles: [], providers: new Map([[CONSTRAINT_VALUE_INFO.key, info]]) };
}

/** A build setting's value as `ctx.build_setting_value` gives it. */
function buildSettingStarlarkValue(v: BuildSettingValue): Value {
  return Array.isArray(v) ? new StarList([...(v as readonly string[])]) : (v as string | number | boolean);
}
