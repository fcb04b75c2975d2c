import { formatPosition, KilnError, type Position } from '../../core/index.js';
import type { Action } from '../../actions/index.js';
import {
  NATIVE_RULE_CLASSES,
  OUTPUT_GROUP_INFO,
  ProviderInstance,
  type Depset,
  type RuleClass,
  type StarlarkAspect,
  type ToolchainRequest,
} from '../../loading/index.js';
import { EvalError, StarlarkError, Thread, typeName, type Value } from '../../starlark/index.js';
import type { BuildConfiguration } from '../config/build-configuration.js';
import type { ConfiguredTarget, FileEntry, RuleAnalysisTarget, TargetGraph } from '../configured/configured-target.js';
import type { RuleContext, ToolchainContext } from '../configured/rule-context.js';
import { canonicalizeIn } from '../configured/target-paths.js';
import { returnedValues } from '../rules/returned-values.js';
import { uniqueFiles } from '../rules/rule-result.js';
import { ActionRegistry } from '../starlark/actions-value.js';
import { CtxValue, dependenciesOf } from '../starlark/ctx-value.js';
import { FileValue } from '../starlark/file-value.js';
import { TargetValue } from '../starlark/target-value.js';
import { AspectCtxValue } from './aspect-ctx.js';
import { describeAspect, propagatesAlong, satisfies, seesAspect, type AspectDescriptor } from './aspect-descriptor.js';
import { mergedTarget, type AspectValue } from './aspect-value.js';
import { isExecAttribute, RuleView } from './rule-view.js';

/** What aspect analysis needs of the analyzer it serves. */
export interface AspectHost {
  readonly graph: TargetGraph;
  analyze(label: string, config: BuildConfiguration): ConfiguredTarget;
  /** The analysis context of a rule target (its attributes in that configuration, its dependencies). */
  contextFor(target: RuleAnalysisTarget, config: BuildConfiguration): RuleContext;
  /** Toolchain resolution of `requests` for the target (an aspect's `toolchains`). */
  resolveToolchains(target: RuleAnalysisTarget, config: BuildConfiguration, requests: readonly ToolchainRequest[]): ToolchainContext;
  readonly workspaceName: string;
  /** `print()` of aspect implementations. */
  debug?(message: string, where: string): void;
  /** Incremental analysis: aspect applications as Skyframe values of their own. */
  readonly memo?: AspectMemo;
}

/** Where aspect values may come from besides computing them (incremental analysis). */
export interface AspectMemo {
  /** The value of aspect application `id`, computed by `compute` when the memo has none. */
  aspectValue(id: string, compute: () => AspectValue): AspectValue;
}

/**
 * One aspect application (Bazel's AspectKey): an aspect, the aspects applied before it whose
 * providers it sees on the same target (`required_aspect_providers`), a target and a configuration.
 */
interface AspectKey {
  readonly descriptor: AspectDescriptor;
  readonly base: readonly AspectKey[];
  readonly label: string;
  readonly config: BuildConfiguration;
  readonly id: string;
}

function aspectKey(descriptor: AspectDescriptor, base: readonly AspectKey[], label: string, config: BuildConfiguration): AspectKey {
  const seen = base.length === 0 ? '' : `(${base.map((b) => b.id.slice(b.id.indexOf(' ') + 1)).join(', ')}) `;
  return { descriptor, base, label, config, id: `${config.id}/${label} ${seen}${descriptor.id}` };
}

/** The descriptors of a key and of its base keys, in application order, each once. */
function pathOf(key: AspectKey): AspectDescriptor[] {
  const out: AspectDescriptor[] = [];
  const add = (k: AspectKey) => {
    for (const b of k.base) add(b);
    if (!out.some((d) => d.id === k.descriptor.id)) out.push(k.descriptor);
  };
  add(key);
  return out;
}

/**
 * Aspects (bazel.build/extending/aspects; Bazel's AspectFunction and StarlarkAspectFactory): an
 * aspect applied to a dependency (through `attr.label(aspects = ...)`, or from the command line)
 * first propagates along the rule's attributes its `attr_aspects` names, then runs its
 * implementation with `(target, ctx)`, where `ctx.rule.attr` shows the dependencies with the
 * aspect's providers, and `target` those of the aspects it requires. It applies to rule targets
 * whose rules advertise its `required_providers` (aliases stand for their actual target; output
 * files for their generating rule with `apply_to_generating_rules`). Its providers are merged into
 * the dependency as its dependent sees it. Each application is computed once per command.
 */
export class AspectAnalyzer {
  /** Without a memo: the applications of this run, by id. */
  private readonly local = new Map<string, AspectValue>();
  private readonly inProgress = new Set<string>();
  /** Every application computed in this run, in the order it finished: its actions are the build's. */
  private readonly computed: AspectValue[] = [];

  constructor(private readonly host: AspectHost) {}

  /** How many applications were analysed in this run: Bazel's "M aspects configured". */
  get configuredCount(): number {
    return this.computed.length;
  }

  /** The actions of every aspect applied so far. */
  actions(): Action[] {
    return this.computed.flatMap((v) => v.actions);
  }

  /**
   * The dependencies of one attribute with the attribute's `aspects` applied: parameters (an
   * aspect's public attributes) take the value of the requesting rule's attribute of that name.
   */
  applyToDependencies(deps: readonly ConfiguredTarget[], aspects: readonly StarlarkAspect[], requester: RuleContext): ConfiguredTarget[] {
    const ruleClass = this.ruleClassOf(requester.target);
    const path = aspects.map((a) =>
      describeAspect(a, {
        label: requester.target.label,
        location: requester.target.location,
        valueOf: (name) => {
          const spec = ruleClass?.attributes.get(name);
          return spec ? requester.attr<unknown>(name, spec.defaultValue) : undefined;
        },
      }),
    );
    return deps.map((dep) => this.view(dep, path, requester.target.location));
  }

  /** `--aspects`: each applied to a top-level target, seeing the earlier ones it requires. Undefined where one does not apply. */
  applyTopLevel(aspects: readonly StarlarkAspect[], ct: ConfiguredTarget): { readonly descriptor: AspectDescriptor; readonly value?: AspectValue }[] {
    const path = aspects.map((a) => describeAspect(a));
    const keys = this.keysOn(ct, path);
    return path.map((descriptor) => {
      const key = keys.find((k) => k.descriptor === descriptor);
      return key ? { descriptor, value: this.value(key) } : { descriptor };
    });
  }

  /** A dependency with the aspects of `path` that apply to it merged in. */
  private view(dep: ConfiguredTarget, path: readonly AspectDescriptor[], at: Position): ConfiguredTarget {
    if (path.length === 0) return dep;
    return mergedTarget(
      dep,
      this.keysOn(dep, path).map((k) => this.value(k)),
      at,
    );
  }

  /** The applications of `path` on a dependency, in order; each sees the earlier ones (on the same target) it requires. */
  private keysOn(dep: ConfiguredTarget, path: readonly AspectDescriptor[]): AspectKey[] {
    const keys: AspectKey[] = [];
    for (const descriptor of path) {
      const subject = this.subjectOf(dep, descriptor);
      if (!subject) continue;
      const base = keys.filter((k) => k.label === subject.label && k.config.id === subject.config.id && seesAspect(descriptor, k.descriptor));
      keys.push(aspectKey(descriptor, base, subject.label, subject.config));
    }
    return keys;
  }

  /** The rule target an aspect attaches to for a dependency, or undefined when it does not apply. */
  private subjectOf(dep: ConfiguredTarget, descriptor: AspectDescriptor): ConfiguredTarget | undefined {
    if (dep.incompatible) return undefined;
    const target = dep.target;
    if (target.kind === 'generated') {
      return descriptor.aspect.definition.applyToGeneratingRules ? this.subjectOf(this.host.analyze(target.generatingRule, dep.config), descriptor) : undefined;
    }
    if (target.kind !== 'rule') return undefined;
    if (target.ruleClass === 'alias') {
      const rc = this.host.contextFor(target, dep.config);
      const raw = rc.attr<string>('actual', '');
      const actual = canonicalizeIn(target.label, raw);
      return actual && this.host.graph.target(actual) ? this.subjectOf(this.host.analyze(actual, dep.config), descriptor) : undefined;
    }
    const advertised = new Set(this.advertisedProviders(target));
    return satisfies(descriptor.aspect.definition.requiredProviders, (key) => advertised.has(key)) ? dep : undefined;
  }

  /** What a rule advertises (`rule(provides = ...)`): `required_providers` is checked against it. */
  private advertisedProviders(target: RuleAnalysisTarget): string[] {
    if (target.ruleDefinition === undefined) return [];
    return (this.host.graph.starlarkRule?.(target.ruleDefinition)?.options.provides ?? []).map((p) => p.key);
  }

  private ruleClassOf(target: RuleAnalysisTarget): RuleClass | undefined {
    if (target.ruleDefinition !== undefined) return this.host.graph.starlarkRule?.(target.ruleDefinition)?.ruleClass;
    return NATIVE_RULE_CLASSES.get(target.ruleClass);
  }

  private value(key: AspectKey): AspectValue {
    const memo = this.host.memo;
    if (memo) return memo.aspectValue(key.id, () => this.compute(key));
    let v = this.local.get(key.id);
    if (!v) {
      if (this.inProgress.has(key.id)) throw new KilnError(`cycle in dependency graph: aspect ${key.descriptor.key} on ${key.label}`);
      this.inProgress.add(key.id);
      try {
        v = this.compute(key);
      } finally {
        this.inProgress.delete(key.id);
      }
      this.local.set(key.id, v);
    }
    return v;
  }

  /** Runs one application: propagation along `attr_aspects` first (through ctx.rule.attr), then the implementation. */
  private compute(key: AspectKey): AspectValue {
    const { descriptor, config } = key;
    const aspect = descriptor.aspect;
    const ct = this.host.analyze(key.label, config);
    const target = ct.target as RuleAnalysisTarget;
    const ruleClass = this.ruleClassOf(target);
    if (!ruleClass) throw new KilnError(`in ${descriptor.key} aspect on ${target.ruleClass} rule ${target.label}: unknown rule class`, target.location);
    const where = `in ${descriptor.key} aspect on ${target.ruleClass} rule ${target.label}`;
    const fail = (message: string) => new KilnError(`${where}: ${message}`, target.location);
    const rc = this.host.contextFor(target, config);
    const self = mergedTarget(
      ct,
      key.base.map((b) => this.value(b)),
      target.location,
    );
    const path = pathOf(key);
    const rule = new RuleView(target, ruleClass, rc, (spec) => {
      const deps = spec.starlark ? dependenciesOf(rc, spec).targets : rc.deps(spec.name, { exec: isExecAttribute(spec), fallback: spec.defaultValue });
      const along = path.filter((d) => propagatesAlong(d, spec.name));
      return along.length === 0 ? deps : deps.map((d) => this.view(d, along, target.location));
    });
    rule.prepare((name) => path.some((d) => propagatesAlong(d, name)));
    const registry = new ActionRegistry({
      label: target.label,
      ruleClass: target.ruleClass,
      location: target.location,
      root: config.outputDirectories.bin,
      execProperties: (group) => (group === undefined ? aspectRc.execProperties() : undefined),
    });
    const aspectRc = this.aspectContext(rc, descriptor, target, config, fail);
    const inner = new CtxValue(aspectRc, {
      ruleClass: { name: aspect.name, attributes: new Map(aspect.attributes.map((a) => [a.name, a])), isTest: false, executable: false, checks: [] },
      registry,
      workspaceName: this.host.workspaceName,
    });
    const ctx = new AspectCtxValue(
      inner,
      rule,
      path.map((d) => d.key),
      `${descriptor.key} on ${target.label}`,
    );
    const thread = new Thread(`analysis of ${descriptor.key} on ${target.label}`, {
      print: (t, msg) => {
        const at = t.callSyntax(0)?.pos;
        this.host.debug?.(msg, at ? formatPosition(at) : descriptor.key);
      },
    });
    let returned: Value;
    try {
      returned = thread.call(aspect.implementation, [new TargetValue(self), ctx]);
    } catch (e) {
      if (e instanceof EvalError) throw new KilnError(`${where}: \n${e.backtrace()}`, target.location, { cause: e });
      if (e instanceof StarlarkError) throw fail(e.message);
      throw e;
    }
    const providers = providersOf(returned, fail);
    for (const promised of aspect.provides) {
      if (!providers.has(promised.key)) {
        throw new KilnError(
          `Aspect '${descriptor.key}', applied to '${target.label}', does not provide advertised provider '${promised.name}'`,
          target.location,
        );
      }
    }
    const problem = registry.check(config.id);
    if (problem !== undefined) throw fail(problem);
    const outputGroups = new Map<string, FileEntry[]>();
    const groups = providers.get(OUTPUT_GROUP_INFO.key);
    if (groups) {
      providers.delete(OUTPUT_GROUP_INFO.key);
      for (const name of groups.names) {
        const files = (groups.field(name) as Depset).toList().filter((f): f is FileValue => f instanceof FileValue);
        outputGroups.set(name, uniqueFiles(files.map((f) => f.entry)));
      }
    }
    const value: AspectValue = { descriptor, label: target.label, config, providers, outputGroups, actions: registry.actions };
    this.computed.push(value);
    return value;
  }

  /**
   * The analysis context the aspect's own `ctx` is built over: its attributes (parameters, and
   * `_` attributes with their defaults, analysed in the target's configuration or exec), the
   * target's configuration, and toolchains resolved for the aspect's `toolchains`.
   */
  private aspectContext(
    rc: RuleContext,
    descriptor: AspectDescriptor,
    target: RuleAnalysisTarget,
    config: BuildConfiguration,
    fail: (message: string) => KilnError,
  ): RuleContext {
    const parameters = new Map<string, unknown>(descriptor.parameters);
    const own = new Set(descriptor.aspect.attributes.map((a) => a.name));
    let toolchains: ToolchainContext | undefined;
    const toolchainContext = () => (toolchains ??= this.host.resolveToolchains(target, config, descriptor.aspect.definition.toolchains));
    return {
      ...rc,
      // The aspect's attributes are its own; the target's (features, exec_properties) stay the target's.
      attr: <T>(name: string, fallback: T, configurable?: boolean) =>
        parameters.has(name) ? (parameters.get(name) as T) : own.has(name) ? fallback : rc.attr(name, fallback, configurable),
      deps: (attribute, options = {}) => {
        const value = options.fallback;
        const labels =
          typeof value === 'string' ? [value] : Array.isArray(value) ? (value as unknown[]).map((v) => (Array.isArray(v) ? v[0] : v) as string) : [];
        const depConfig = options.exec ? rc.execConfig : config;
        return labels.map((label) => {
          if (!this.host.graph.target(label)) throw fail(`in ${attribute} attribute: no such target '${label}'`);
          return this.host.analyze(label, depConfig);
        });
      },
      outputFile: () => {
        throw fail('aspects have no predeclared outputs');
      },
      error: (attribute, message) => fail(attribute ? `in ${attribute} attribute: ${message}` : message),
      toolchainContext,
      execGroupNames: [],
      execGroupContext: () => undefined,
      execProperties: () => [
        ...toolchainContext().executionPlatform.execProperties,
        ...rc.attr<readonly (readonly [string, string])[]>('exec_properties', [], true).filter(([k]) => !k.includes('.')),
      ],
    };
  }
}

/** The providers an aspect returned: a list of provider instances, one instance, a legacy struct, or None. */
function providersOf(returned: Value, fail: (message: string) => KilnError): Map<string, ProviderInstance> {
  const list = returnedValues(returned);
  if (!list) throw fail(`Aspect implementation should return a struct, a list, or a provider instance, but got ${typeName(returned)}`);
  const out = new Map<string, ProviderInstance>();
  for (const v of list) {
    if (!(v instanceof ProviderInstance)) throw fail('A return value of an aspect implementation function should be a sequence of declared providers');
    if (out.has(v.provider.key)) throw fail(`Multiple conflicting returned providers with key ${v.provider.name}`);
    out.set(v.provider.key, v);
  }
  return out;
}
