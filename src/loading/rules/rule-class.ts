import { attr, type AttributeSpec } from './attribute.js';
import type { RuleTarget } from '../target.js';
import type { StarlarkTransition } from '../starlark-transition.js';

/** What a declaration-time check may report: an attribute (or null for the rule) and a message. */
type RuleCheck = (rule: RuleTarget, report: (attribute: string | null, message: string) => void) => void;

/** A rule's schema: its attributes and the checks Bazel runs when the rule is declared. */
export interface RuleClass {
  readonly name: string;
  readonly attributes: ReadonlyMap<string, AttributeSpec>;
  readonly isTest: boolean;
  readonly executable: boolean;
  readonly checks: readonly RuleCheck[];
  /** A native rule's implicit outputs, by key: `%{name}` templates as in Starlark's `outputs`. */
  readonly implicitOutputs?: readonly (readonly [string, string])[];
  /** Defined in Starlark by `rule()`. */
  readonly starlarkDefined?: boolean;
  /** For a Starlark rule: what loading knows beyond the attributes. */
  readonly starlark?: StarlarkRuleInfo;
}

/** The build setting a rule declares with `build_setting = config.<type>(flag = ...)`. */
export interface BuildSettingSpec {
  readonly type: 'string' | 'bool' | 'int' | 'string_list' | 'label';
  /** Settable on the command line (`--//pkg:name=value`). */
  readonly flag: boolean;
}

/** A Starlark rule class beyond its attributes. */
export interface StarlarkRuleInfo {
  /** `//pkg:defs.bzl%name`: where analysis finds the rule (its implementation function). */
  readonly key: string;
  readonly doc: string;
  /** `outputs = {"key": "%{name}.txt"}` (deprecated form): implicit outputs by key. */
  readonly implicitOutputs: readonly (readonly [string, string])[];
  readonly buildSetting?: BuildSettingSpec;
  /** `provides`: provider names the implementation promises to return. */
  readonly provides: readonly string[];
  /** `toolchains`: toolchain types (canonical labels) the implementation reads from `ctx.toolchains`. */
  readonly toolchains?: readonly { readonly type: string; readonly mandatory: boolean }[];
  /** `exec_compatible_with` of the rule: constraint values (canonical labels) its execution platform must have. */
  readonly execCompatibleWith?: readonly string[];
  /** `exec_groups`: named groups, each resolved to its own execution platform and toolchains. */
  readonly execGroups?: readonly {
    readonly name: string;
    readonly toolchains: readonly { readonly type: string; readonly mandatory: boolean }[];
    readonly execCompatibleWith: readonly string[];
  }[];
  /** `cfg`: the incoming transition of the rule's targets (a Starlark transition; analysis applies it). */
  readonly incomingTransition?: StarlarkTransition;
  /** `analysis_test = True`: the implementation returns AnalysisTestResultInfo and registers no actions. */
  readonly analysisTest?: boolean;
  /** `_skylark_testable = True`: the targets carry an `Actions` provider with their actions. */
  readonly starlarkTestable?: boolean;
}

/** Attributes every rule shares, by name; each rule picks the subset Bazel gives it. */
const COMMON: Readonly<Record<string, AttributeSpec>> = Object.fromEntries(
  [
    attr('name', 'string', { mandatory: true, configurable: false }),
    attr('visibility', 'label_list', { configurable: false }),
    attr('tags', 'string_list', { configurable: false }),
    attr('testonly', 'bool', { configurable: false }),
    attr('deprecation', 'string', { configurable: false, default: null }),
    attr('features', 'string_list'),
    attr('licenses', 'license', { configurable: false }),
    attr('aspect_hints', 'label_list'),
    attr('compatible_with', 'label_list', { configurable: false }),
    attr('restricted_to', 'label_list', { configurable: false }),
    attr('target_compatible_with', 'label_list'),
    attr('package_metadata', 'label_list', { configurable: false }),
    attr('exec_compatible_with', 'label_list', { configurable: false }),
    attr('exec_group_compatible_with', 'label_list_dict', { configurable: false }),
    attr('exec_properties', 'string_dict'),
  ].map((a) => [a.name, a]),
);

/** Bazel 2.1.0's order of the common attributes; attributes it did not have yet are placed near their kin. */
const COMMON_ORDER = [
  'name',
  'visibility',
  'deprecation',
  'tags',
  'testonly',
  'features',
  'compatible_with',
  'restricted_to',
  'target_compatible_with',
  'aspect_hints',
  'package_metadata',
  'licenses',
  'exec_properties',
  'exec_compatible_with',
  'exec_group_compatible_with',
];

/** The common set of most rules (alias has exactly this; others add licenses and more). */
export const BASE = [
  'name',
  'aspect_hints',
  'compatible_with',
  'deprecation',
  'features',
  'package_metadata',
  'restricted_to',
  'tags',
  'target_compatible_with',
  'testonly',
  'visibility',
];
export const WITH_LICENSES = [...BASE, 'licenses'];
export const WITH_EXEC = [...WITH_LICENSES, 'exec_compatible_with', 'exec_group_compatible_with', 'exec_properties'];

export interface RuleClassOptions {
  readonly common: readonly string[];
  readonly attributes?: readonly AttributeSpec[];
  readonly isTest?: boolean;
  readonly executable?: boolean;
  readonly checks?: readonly RuleCheck[];
  readonly implicitOutputs?: readonly (readonly [string, string])[];
}

export function defineRuleClass(name: string, options: RuleClassOptions): RuleClass {
  const attributes = new Map<string, AttributeSpec>();
  // Common attributes come first, in Bazel 2.1.0's order (as `query --output=build` prints them).
  const common = [...options.common].sort((x, y) => COMMON_ORDER.indexOf(x) - COMMON_ORDER.indexOf(y));
  for (const n of common) {
    const spec = COMMON[n];
    if (!spec) throw new Error(`unknown common attribute ${n}`);
    attributes.set(n, spec);
  }
  // A rule's own declaration overrides a common one of the same name (e.g. config_setting's features),
  // keeping the common position.
  for (const a of options.attributes ?? []) attributes.set(a.name, a);
  return {
    name,
    attributes,
    isTest: options.isTest ?? false,
    executable: options.executable ?? false,
    checks: options.checks ?? [],
    ...(options.implicitOutputs ? { implicitOutputs: options.implicitOutputs } : {}),
  };
}
