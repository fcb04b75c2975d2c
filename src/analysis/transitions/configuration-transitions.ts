import { KilnError } from '../../core/index.js';
import type { StarlarkTransition } from '../../loading/index.js';
import { StarStruct } from '../../starlark/index.js';
import type { BuildConfiguration, ConfigurationPair } from '../config/build-configuration.js';
import type { BuildSettingLookup } from '../config/config-matching.js';
import type { RuleAnalysisTarget, TargetGraph } from '../configured/configured-target.js';
import type { RuleContext } from '../configured/rule-context.js';
import { canonicalizeIn } from '../configured/target-paths.js';
import { hostCpuName } from '../config/platform.js';
import { applyTransition, PATCH_TRANSITION_KEY, type TransitionEnvironment } from './apply-transition.js';
import { transitionAttributes } from './transition-attributes.js';
import { TransitionedConfigurations } from './transitioned-configurations.js';

export interface ConfigurationTransitionsOptions {
  readonly buildSettings?: BuildSettingLookup;
  readonly debug?: (message: string, where: string) => void;
  /** The attribute reader of a rule in a configuration (select() resolved there). */
  readonly attr: (target: RuleAnalysisTarget, config: BuildConfiguration) => RuleContext['attr'];
}

/**
 * Applies the transitions of Starlark rules: a rule's incoming one (`rule(cfg = t)`), before its
 * configured target's key is made, and an attribute's outgoing one (`attr.label(cfg = t)`), for
 * each dependency edge. Results are memoised per (target or transition, configuration): a
 * transition's implementation runs once per configuration it is applied in.
 */
export class ConfigurationTransitions {
  private readonly configurations: TransitionedConfigurations | undefined;
  private readonly env: TransitionEnvironment;
  private readonly incomingByConfig = new Map<string, Map<string, BuildConfiguration>>();
  private readonly outgoingByConfig = new Map<string, Map<StarlarkTransition, Map<string, ReadonlyMap<string, BuildConfiguration>>>>();

  constructor(
    private readonly graph: TargetGraph,
    private readonly pair: ConfigurationPair,
    private readonly options: ConfigurationTransitionsOptions,
  ) {
    this.configurations = pair.context ? new TransitionedConfigurations(pair, pair.context, options.buildSettings) : undefined;
    this.env = {
      hostCpu: pair.target.hostCpu || (pair.context ? hostCpuName(pair.context.host) : ''),
      ...(options.buildSettings ? { buildSettings: options.buildSettings } : {}),
      ...(options.debug ? { debug: options.debug } : {}),
    };
  }

  /** The exec configuration of `config` (tools of a transitioned target keep what the transition set that exec keeps). */
  execConfiguration(config: BuildConfiguration): BuildConfiguration {
    if (config.isExec) return config;
    return this.configurations?.execConfiguration(config) ?? this.pair.exec;
  }

  /** The configuration `label` is analysed in when asked for in `config`: its rule's `cfg` transition applied. */
  incoming(label: string, config: BuildConfiguration): BuildConfiguration {
    let known = this.incomingByConfig.get(config.id);
    if (!known) this.incomingByConfig.set(config.id, (known = new Map()));
    const cached = known.get(label);
    if (cached) return cached;
    const target = this.graph.target(label);
    let result = config;
    if (target?.kind === 'rule' && target.ruleDefinition !== undefined) {
      const ruleClass = this.graph.starlarkRule?.(target.ruleDefinition)?.ruleClass;
      const transition = ruleClass?.starlark?.incomingTransition;
      if (ruleClass && transition) {
        const attr = this.options.attr(target, config);
        const results = this.apply(
          transition,
          config,
          transitionAttributes(ruleClass, attr, (raw) => canonicalizeIn(target.label, raw)),
        );
        // Bazel's FunctionPatchTransition, at the transition's definition.
        if (results.size !== 1) throw new KilnError('Rule transition only allowed to return a single transitioned configuration.', transition.location);
        result = [...results.values()][0]!;
      }
    }
    known.set(label, result);
    return result;
  }

  /** The configurations an attribute's transition makes from the depending rule's `config`, by split key. */
  outgoing(transition: StarlarkTransition, target: RuleAnalysisTarget, config: BuildConfiguration, ctx: RuleContext): ReadonlyMap<string, BuildConfiguration> {
    let byTransition = this.outgoingByConfig.get(config.id);
    if (!byTransition) this.outgoingByConfig.set(config.id, (byTransition = new Map()));
    let byTarget = byTransition.get(transition);
    if (!byTarget) byTransition.set(transition, (byTarget = new Map()));
    let results = byTarget.get(target.label);
    if (!results) {
      const ruleClass = target.ruleDefinition !== undefined ? this.graph.starlarkRule?.(target.ruleDefinition)?.ruleClass : undefined;
      // Only the analysis test transition ignores `attr`, and only Starlark rules have attribute transitions.
      const attr = ruleClass ? transitionAttributes(ruleClass, ctx.attr, ctx.canonicalize) : undefined;
      results = this.apply(transition, config, attr);
      byTarget.set(target.label, results);
    }
    return results;
  }

  private apply(transition: StarlarkTransition, config: BuildConfiguration, attr: StarStruct | undefined): ReadonlyMap<string, BuildConfiguration> {
    if (!this.configurations) throw new KilnError('configuration transitions need the configuration context (createConfigurations)', transition.location);
    const out = new Map<string, BuildConfiguration>();
    const results = applyTransition(transition, config.options, attr ?? EMPTY, this.env);
    for (const [key, options] of results) {
      out.set(key, options === config.options ? config : this.configurations.transitioned(config, options, transition.location));
    }
    return out.size > 0 ? out : new Map([[PATCH_TRANSITION_KEY, config]]);
  }
}

/** The `attr` of a transition applied where no Starlark rule is (analysis_test_transition never reads it). */
const EMPTY = new StarStruct([]);
