import { Builtin, None, StarCallable, StarDict, StarList, StarObject, StarTuple, StarlarkError, typeName, unpackArgs, type Value } from '../starlark/index.js';
import { BzlExport } from './bzl-export.js';
import { optionalDoc, stringSequence } from './bzl-params.js';
import type { PackageContext } from './label.js';
import { Provider } from './provider.js';
import type { AttributeSpec } from './rules/attribute.js';
import { labelSequence, providerSets, ruleAttributes, type ToolchainRequest } from './bzl-builtins.js';

/** A provider an aspect names (`required_providers`, `provides`): final once its global is exported. */
export interface ProviderRef {
  readonly key: string;
  readonly name: string;
}

/** What `aspect(...)` declares beyond its implementation, as Bazel's StarlarkDefinedAspect keeps it. */
export interface AspectDefinition {
  readonly doc: string;
  /** `attr_aspects`: rule attribute names the aspect propagates along (`["*"]`: all). */
  readonly attrAspects: readonly string[];
  /** The aspect's own attributes: `_`-prefixed implicit ones, and parameters (bool, int, string). */
  readonly attributes: readonly AttributeSpec[];
  /** Alternatives of provider sets a target's rule must advertise (`rule(provides = ...)`); empty: every target. */
  readonly requiredProviders: readonly (readonly ProviderRef[])[];
  /** Alternatives of provider sets another aspect must advertise for this one to see its providers. */
  readonly requiredAspectProviders: readonly (readonly ProviderRef[])[];
  /** `provides`: the providers the implementation promises (other aspects' `required_aspect_providers` match them). */
  readonly provides: readonly Provider[];
  /** `toolchains`: the toolchain types resolved for each target the aspect is applied to. */
  readonly toolchains: readonly ToolchainRequest[];
  readonly fragments: readonly string[];
  /** Applied to an output file: the aspect goes to the rule that generates it. */
  readonly applyToGeneratingRules: boolean;
}

/**
 * The value of `aspect(...)`: its implementation, the attributes it propagates along and its own
 * attributes. Like a rule, it takes the name of the first global it is bound to; its key
 * (`//pkg:defs.bzl%name`) is how analysis and the command line (`--aspects`) name it.
 */
export class StarlarkAspect extends StarObject {
  /** The global it is exported as. */
  readonly exported = new BzlExport();
  constructor(
    readonly implementation: StarCallable,
    readonly definition: AspectDefinition,
  ) {
    super();
  }
  get type(): string {
    return 'Aspect';
  }
  get doc(): string {
    return this.definition.doc;
  }
  get attrAspects(): readonly string[] {
    return this.definition.attrAspects;
  }
  get attributes(): readonly AttributeSpec[] {
    return this.definition.attributes;
  }
  get provides(): readonly Provider[] {
    return this.definition.provides;
  }
  /** `//pkg:defs.bzl%name` once exported; undefined before. */
  get key(): string | undefined {
    const e = this.exported.value;
    return e ? `${e.bzlLabel}%${e.name}` : undefined;
  }
  /** The exported name (Bazel's `aspect_ids` and messages use the key). */
  get name(): string {
    return this.exported.value?.name ?? 'unexported aspect';
  }
  repr(): string {
    return '<aspect>';
  }
}

const ASPECT_PARAMS = [
  'implementation',
  'attr_aspects?',
  'toolchains_aspects?',
  'attrs?',
  'required_providers?',
  'required_aspect_providers?',
  'provides?',
  'requires?',
  'propagation_predicate?',
  'fragments?',
  'host_fragments?',
  'toolchains?',
  'doc?',
  'apply_to_generating_rules?',
  'exec_compatible_with?',
  'exec_groups?',
  'subrules?',
];

/** Parameters Kiln accepts only empty: honouring them would change what is applied where (never ignored). */
const UNSUPPORTED_PARAMS = ['requires', 'propagation_predicate', 'toolchains_aspects', 'exec_compatible_with', 'exec_groups', 'subrules'];

/** Parameter attributes (public ones) take their value from the requesting rule: only these types can. */
const PARAMETER_TYPES = new Set(['bool', 'int', 'string']);

/** `attr_aspects`: names, or `"*"` alone (StarlarkRuleClassFunctions.aspect). */
function attrAspectsOf(v: Value | undefined): string[] {
  const names = stringSequence('aspect', 'attr_aspects', v);
  if (names.includes('*') && names.length !== 1) throw new StarlarkError("'*' must be the only string in 'attr_aspects' list");
  return names;
}

/** The aspect's attributes, checked as Bazel checks them when `aspect()` is called. */
function aspectAttributes(v: Value | undefined): AttributeSpec[] {
  const specs = ruleAttributes(v, 'aspect');
  for (const spec of specs) {
    if (spec.name.startsWith('_')) {
      if (spec.type === 'label' && spec.defaultValue === null) throw new StarlarkError(`Aspect attribute '${spec.name}' has no default value.`);
      continue;
    }
    if (!PARAMETER_TYPES.has(spec.type)) throw new StarlarkError(`Aspect parameter attribute '${spec.name}' must have type 'bool', 'int' or 'string'.`);
    const allowed = spec.allowedValues;
    if (allowed && spec.defaultValue !== '' && spec.defaultValue !== 0 && !allowed.includes(spec.defaultValue as string | number)) {
      throw new StarlarkError(
        `Aspect parameter attribute '${spec.name}' has a bad default value: has to be one of ${allowed.map((a) => (typeof a === 'string' ? `'${a}'` : a)).join(', ')} instead of '${String(spec.defaultValue)}'`,
      );
    }
  }
  return specs;
}

/** `aspect(implementation, attr_aspects = [], attrs = {}, required_providers = [], ..., doc = None, provides = [])`. */
export function aspectBuiltin(context: PackageContext): Builtin {
  return new Builtin('aspect', (_t, args, kwargs) => {
    if (args.length > 1) throw new StarlarkError(`aspect: got ${args.length} positional arguments, want at most 1`);
    const got = unpackArgs('aspect', args, kwargs, ASPECT_PARAMS);
    const arg = (p: string) => got[ASPECT_PARAMS.findIndex((x) => x.replace('?', '') === p)];
    const implementation = arg('implementation')!;
    if (!(implementation instanceof StarCallable))
      throw new StarlarkError(`aspect: for parameter implementation: got ${typeName(implementation)}, want function`);
    for (const p of UNSUPPORTED_PARAMS) {
      const v = arg(p);
      const empty =
        v === undefined ||
        v === None ||
        ((v instanceof StarList || v instanceof StarTuple) && v.elems.length === 0) ||
        (v instanceof StarDict && v.len() === 0);
      if (!empty) throw new StarlarkError(`aspect(${p} = ...) is not supported by Kiln`);
    }
    const provides = arg('provides');
    const providers = (provides instanceof StarList || provides instanceof StarTuple ? provides.elems : []).map((p) => {
      if (!(p instanceof Provider)) {
        throw new StarlarkError(
          `Illegal argument: element in 'provides' is of unexpected type. Should be list of providers, but got item of type ${typeName(p)}. `,
        );
      }
      return p;
    });
    const required = providerSets('aspect', arg('required_providers'), 'required_providers') ?? [];
    const applyToGeneratingRules = arg('apply_to_generating_rules');
    if (applyToGeneratingRules !== undefined && applyToGeneratingRules !== None && typeof applyToGeneratingRules !== 'boolean') {
      throw new StarlarkError(`aspect: for parameter apply_to_generating_rules: got ${typeName(applyToGeneratingRules)}, want bool`);
    }
    if (applyToGeneratingRules === true && required.length > 0) {
      throw new StarlarkError('An aspect cannot simultaneously have required providers and apply to generating rules.');
    }
    return new StarlarkAspect(implementation, {
      doc: optionalDoc('aspect', arg('doc')),
      attrAspects: attrAspectsOf(arg('attr_aspects')),
      attributes: aspectAttributes(arg('attrs')),
      requiredProviders: required,
      requiredAspectProviders: providerSets('aspect', arg('required_aspect_providers'), 'required_aspect_providers') ?? [],
      provides: providers,
      toolchains: labelSequence(arg('toolchains'), 'toolchains', context, 'aspect').map((t) => (typeof t === 'string' ? { type: t, mandatory: true } : t)),
      fragments: stringSequence('aspect', 'fragments', arg('fragments')),
      applyToGeneratingRules: applyToGeneratingRules === true,
    });
  });
}
