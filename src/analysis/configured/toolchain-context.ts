import { KilnError } from '../../core/index.js';
import type { BuildConfiguration } from '../config/build-configuration.js';
import { flattenPlatform, type ConstraintValue, type Platform, type PlatformDeclaration } from '../config/platform.js';
import { resolveToolchains, toolchainDebugFilter, type DeclaredToolchain, type ToolchainTypeRequest } from '../config/toolchain-resolution.js';
import { canonicalFlagLabel } from '../options/parse-build-options.js';
import type { AnalysisTarget, ConfiguredTarget, RuleAnalysisTarget, TargetGraph } from './configured-target.js';
import { constraintValueOf, platformDeclarationsFrom } from './platform-declarations.js';
import { ruleError, type ToolchainContext } from './rule-context.js';
import { canonicalizeIn } from './target-paths.js';

/** The execution platforms and toolchains a build may use, in priority order. */
interface ToolchainRegistry {
  readonly executionPlatforms: readonly Platform[];
  readonly toolchains: readonly DeclaredToolchain[];
  /** Every target read to make it: each resolution reads them again, so incremental analysis records them as its inputs. */
  readonly reads: readonly string[];
}

/** What the resolver needs of the analyzer. */
export interface ToolchainResolverHooks {
  /** Analyses a target (a toolchain's implementation, a target_settings config_setting) through the memo. */
  analyze(label: string, config: BuildConfiguration): ConfiguredTarget;
  /** `--toolchain_resolution_debug` output. */
  info?(message: string): void;
}

/**
 * Toolchain resolution of configured targets (config/toolchain-resolution.ts) over the target
 * graph: the execution platforms (`--extra_execution_platforms`, `register_execution_platforms`, the
 * host platform) and toolchains (`--extra_toolchains`, `register_toolchains`) are read once per set
 * of flags, and every target's resolution reads their targets again through the graph, so that an
 * edit of a toolchain or platform invalidates the targets that used them.
 */
export class ToolchainResolver {
  private readonly registries = new Map<string, ToolchainRegistry>();
  private readonly debugFilters = new Map<string, (label: string) => boolean>();

  constructor(
    private readonly graph: TargetGraph,
    private readonly hooks: ToolchainResolverHooks,
  ) {}

  /** Resolves `requests` for `target` in `config`; `hostPlatform` is the configuration's own (host) execution platform, the last candidate. */
  resolve(
    target: RuleAnalysisTarget,
    config: BuildConfiguration,
    hostPlatform: Platform,
    requests: readonly ToolchainTypeRequest[],
    execConstraintLabels: readonly string[],
  ): ToolchainContext {
    const registry = this.registryFor(config, hostPlatform);
    for (const label of registry.reads) this.graph.target(label);
    const execConstraints = execConstraintLabels.map((label) => {
      const value = constraintValueOf(this.graph, label);
      if (!value) throw ruleError(target, 'exec_compatible_with', `'${label}' does not have mandatory providers: 'ConstraintValueInfo'`);
      return value;
    });
    const debugOption = config.options.getString('toolchain_resolution_debug');
    let debugFilter = this.debugFilters.get(debugOption);
    if (!debugFilter) this.debugFilters.set(debugOption, (debugFilter = toolchainDebugFilter([debugOption])));
    const debugTarget = debugFilter(target.label);
    // No choice to make: the first execution platform (the host one unless others are registered).
    if (requests.length === 0 && execConstraints.length === 0 && !debugTarget) {
      return { executionPlatform: registry.executionPlatforms[0]!, toolchains: new Map() };
    }
    let resolution: ReturnType<typeof resolveToolchains>;
    try {
      resolution = resolveToolchains({
        targetLabel: target.label,
        configChecksum: config.id.slice(0, 7),
        requests,
        targetPlatform: config.platform,
        executionPlatforms: registry.executionPlatforms,
        execConstraints,
        toolchains: registry.toolchains,
        settingMatches: (label) => {
          const setting = this.hooks.analyze(label, config);
          if (!setting.configMatch) throw ruleError(target, undefined, `'${label}' is not a config_setting (in target_settings of a toolchain)`);
          return setting.configMatch.matches;
        },
        defaultValueOf: (setting) => this.defaultValueOf(setting),
        debugType: debugFilter,
        debugTarget,
      });
    } catch (e) {
      if (e instanceof KilnError && e.pos === undefined) throw new KilnError(e.message, target.location, { cause: e });
      throw e;
    }
    for (const message of resolution.debug) this.hooks.info?.(message);
    const toolchains = new Map<string, ConfiguredTarget | undefined>();
    for (const request of requests) {
      const chosen = resolution.toolchains.get(request.type);
      // Toolchains are analysed in the target's configuration (their tools in exec, as any rule's).
      toolchains.set(request.type, chosen ? this.hooks.analyze(chosen.implementation, config) : undefined);
    }
    return { executionPlatform: resolution.executionPlatform, toolchains };
  }

  private defaultValueOf(setting: string): string | undefined {
    const t = this.graph.target(setting);
    if (t?.kind !== 'rule' || t.ruleClass !== 'constraint_setting') return undefined;
    const value = t.attrs.get('default_constraint_value');
    return typeof value === 'string' ? (canonicalizeIn(setting, value) ?? value) : undefined;
  }

  private registryFor(config: BuildConfiguration, hostPlatform: Platform): ToolchainRegistry {
    const o = config.options;
    const extraPlatforms = o.getList('extra_execution_platforms');
    const extraToolchains = o.getList('extra_toolchains');
    const key = JSON.stringify([extraPlatforms, extraToolchains, hostPlatform.label]);
    let registry = this.registries.get(key);
    if (!registry) {
      registry = this.makeRegistry(extraPlatforms, extraToolchains, hostPlatform);
      this.registries.set(key, registry);
    }
    return registry;
  }

  private makeRegistry(extraPlatforms: readonly string[], extraToolchains: readonly string[], hostPlatform: Platform): ToolchainRegistry {
    const reads = new Set<string>();
    const recording: TargetGraph = {
      target: (label) => {
        reads.add(label);
        return this.graph.target(label);
      },
    };
    const registered = this.graph.registrations?.() ?? { toolchains: [], executionPlatforms: [] };
    const expand = (patterns: readonly string[], ruleClass: string, what: string, provider: string): string[] => {
      const out: string[] = [];
      for (const written of patterns) {
        const { labels, explicit } = this.graph.rulesMatching?.(written) ?? { labels: [canonicalFlagLabel(written) ?? written], explicit: true };
        for (const label of labels) {
          const t: AnalysisTarget | undefined = recording.target(label);
          if (t?.kind === 'rule' && t.ruleClass === ruleClass) {
            if (!out.includes(label)) out.push(label);
          } else if (explicit) {
            throw new KilnError(
              t
                ? `invalid registered ${what} '${label}': target does not provide the ${provider} provider`
                : `invalid registered ${what} '${label}': no such target '${label}'`,
            );
          }
        }
      }
      return out;
    };
    const platformLabels = expand([...extraPlatforms, ...registered.executionPlatforms], 'platform', 'execution platform', 'PlatformInfo');
    const declarations = platformDeclarationsFrom(recording);
    const lookup = (label: string): PlatformDeclaration | undefined => declarations(label);
    const executionPlatforms = [...platformLabels.map((label) => flattenPlatform(label, lookup)), hostPlatform];
    const toolchains = expand([...extraToolchains, ...registered.toolchains], 'toolchain', 'toolchain', 'DeclaredToolchainInfo').map((label) =>
      this.declaredToolchain(recording.target(label) as RuleAnalysisTarget, recording),
    );
    return { executionPlatforms, toolchains, reads: [...reads] };
  }

  private declaredToolchain(t: RuleAnalysisTarget, graph: TargetGraph): DeclaredToolchain {
    const labelAttr = (name: string): string => {
      const v = t.attrs.get(name);
      if (typeof v !== 'string') throw ruleError(t, name, v === undefined ? 'missing value for mandatory attribute' : 'select() is not supported by Kiln here');
      return canonicalizeIn(t.label, v) ?? v;
    };
    const labels = (name: string) => {
      const v = t.attrs.get(name);
      return (Array.isArray(v) ? (v as string[]) : []).map((raw) => canonicalizeIn(t.label, raw) ?? raw);
    };
    const constraints = (name: string): ConstraintValue[] =>
      labels(name).map((label) => {
        const value = constraintValueOf(graph, label);
        if (!value) throw ruleError(t, name, `'${label}' does not have mandatory providers: 'ConstraintValueInfo'`);
        return value;
      });
    const toolchainType = labelAttr('toolchain_type');
    const typeTarget = graph.target(toolchainType);
    if (typeTarget?.kind !== 'rule' || typeTarget.ruleClass !== 'toolchain_type') {
      throw ruleError(t, 'toolchain_type', `'${toolchainType}' does not have mandatory providers: 'ToolchainTypeInfo'`);
    }
    return {
      label: t.label,
      toolchainType,
      implementation: labelAttr('toolchain'),
      execConstraints: constraints('exec_compatible_with'),
      targetConstraints: constraints('target_compatible_with'),
      targetSettings: labels('target_settings'),
    };
  }
}
