import { KilnError } from '../../core/index.js';
import type { PackageLoader, StarlarkAspect, StarlarkTransition } from '../../loading/index.js';
import type { BuildConfiguration } from '../config/build-configuration.js';
import type { BuildSettingLookup } from '../config/config-matching.js';
import type { Platform } from '../config/platform.js';
import type { JavaRuntimeVariables } from '../expansion/genrule-command.js';
import type { ConfiguredTarget, FileEntry, RuleAnalysisTarget } from './configured-target.js';

/** A user error in a rule's analysis, Bazel style: `in <attr> attribute of <class> rule <label>: ...`. */
export class RuleError extends KilnError {}

/** What a rule implementation sees of its target and of analysis. */
export interface RuleContext {
  readonly target: RuleAnalysisTarget;
  readonly config: BuildConfiguration;
  /** The exec configuration of `config`. */
  readonly execConfig: BuildConfiguration;
  readonly buildSettings?: BuildSettingLookup;
  readonly javaRuntime?: JavaRuntimeVariables;
  /** Loads packages for rules that read the target graph themselves (genquery). */
  readonly packageLoader?: PackageLoader;
  /** A warning about this rule, printed with its location. */
  warn(message: string): void;
  /** The attribute's value in this configuration (select resolved), or `fallback` when not set. */
  attr<T>(name: string, fallback: T, configurable?: boolean): T;
  /** Analyses the labels of a label or label-list attribute, checking visibility and testonly. */
  deps(
    attribute: string,
    options?: {
      readonly exec?: boolean;
      readonly configurable?: boolean;
      readonly skipTestonly?: boolean;
      readonly fallback?: unknown;
      /** The configuration to analyse them in (one result of an attribute's transition). */
      readonly config?: BuildConfiguration;
    },
  ): ConfiguredTarget[];
  /** The dependencies with `aspects` applied (`attr.label(aspects = ...)`): their providers merged in, as the rule sees them. */
  applyAspects?(deps: readonly ConfiguredTarget[], aspects: readonly StarlarkAspect[]): ConfiguredTarget[];
  /** The configurations an attribute's transition (`attr.label(cfg = t)`) makes from this one, by split key. */
  transition(transition: StarlarkTransition): ReadonlyMap<string, BuildConfiguration>;
  /** Makes a label written in this package canonical. */
  canonicalize(raw: string): string | undefined;
  /** Source or derived file of an output of this rule. */
  outputFile(name: string, toBindir: boolean): FileEntry;
  error(attribute: string | undefined, message: string): RuleError;
  /**
   * The target's toolchain resolution (made on first use): its execution platform and the toolchains
   * of the types its rule asks for.
   */
  toolchainContext(): ToolchainContext;
  /** The resolution of one of the rule's `exec_groups` (made on first use); undefined for a name the rule does not declare. */
  execGroupContext(name: string): ToolchainContext | undefined;
  /** The names of the rule's `exec_groups`, in declaration order. */
  readonly execGroupNames: readonly string[];
  /**
   * The platform properties of the target's actions (of exec group `group`, else the default one):
   * the execution platform's `exec_properties`, then the target's own, where `group.NAME` entries
   * belong to that group alone.
   */
  execProperties(group?: string): readonly (readonly [string, string])[];
}

/** What toolchain resolution chose for one configured target. */
export interface ToolchainContext {
  readonly executionPlatform: Platform;
  /** Requested toolchain type → the resolved toolchain's target (its `toolchain` attribute); undefined for an optional type without one. */
  readonly toolchains: ReadonlyMap<string, ConfiguredTarget | undefined>;
}

export function ruleError(target: RuleAnalysisTarget, attribute: string | undefined, message: string): RuleError {
  const where = attribute ? `in ${attribute} attribute of ${target.ruleClass} rule ${target.label}` : `in ${target.ruleClass} rule ${target.label}`;
  return new RuleError(`${where}: ${message}`, target.location);
}
