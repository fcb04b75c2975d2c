import { Builtin, None, StarCallable, StarList, StarObject, StarTuple, StarlarkError, typeName, unpackArgs, type Value } from '../starlark/index.js';
import { Provider } from './provider.js';
import type { AttributeSpec } from './rules/attribute.js';
import { ruleAttributes } from './bzl-builtins.js';

/**
 * The value of `aspect(...)`: its implementation, the attributes it propagates along and its own
 * attributes. Like a rule, it takes the name of the first global it is bound to.
 */
export class StarlarkAspect extends StarObject {
  private exported: { readonly name: string; readonly bzlLabel: string } | undefined;
  constructor(
    readonly implementation: StarCallable,
    readonly doc: string,
    /** `attr_aspects`: rule attribute names the aspect propagates along (`"*"` for all). */
    readonly attrAspects: readonly string[],
    readonly attributes: readonly AttributeSpec[],
    readonly provides: readonly Provider[],
  ) {
    super();
  }
  get type(): string {
    return 'Aspect';
  }
  get isExported(): boolean {
    return this.exported !== undefined;
  }
  /** The global name and the .bzl file label it was exported from. */
  get exportedAs(): { readonly name: string; readonly bzlLabel: string } | undefined {
    return this.exported;
  }
  export(name: string, bzlLabel: string): void {
    this.exported ??= { name, bzlLabel };
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

function stringList(fn: string, param: string, v: Value | undefined): string[] {
  if (v === undefined || v === None) return [];
  if (!(v instanceof StarList || v instanceof StarTuple)) throw new StarlarkError(`${fn}: for parameter ${param}: got ${typeName(v)}, want sequence of strings`);
  return v.elems.map((e) => {
    if (typeof e !== 'string') throw new StarlarkError(`${fn}: for parameter ${param}: got ${typeName(e)} in the list, want string`);
    return e;
  });
}

/** `aspect(implementation, attr_aspects = [], attrs = {}, ..., doc = None, provides = [])`. */
export const aspectBuiltin = new Builtin('aspect', (_t, args, kwargs) => {
  if (args.length > 1) throw new StarlarkError(`aspect: got ${args.length} positional arguments, want at most 1`);
  const got = unpackArgs('aspect', args, kwargs, ASPECT_PARAMS);
  const arg = (p: string) => got[ASPECT_PARAMS.findIndex((x) => x.replace('?', '') === p)];
  const implementation = arg('implementation')!;
  if (!(implementation instanceof StarCallable)) throw new StarlarkError(`aspect: for parameter implementation: got ${typeName(implementation)}, want function`);
  const doc = arg('doc');
  if (doc !== undefined && doc !== None && typeof doc !== 'string') throw new StarlarkError(`aspect: for parameter doc: got ${typeName(doc)}, want string`);
  const provides = arg('provides');
  const providers = (provides instanceof StarList || provides instanceof StarTuple ? provides.elems : []).map((p) => {
    if (!(p instanceof Provider)) throw new StarlarkError(`aspect: for parameter provides: got ${typeName(p)}, want provider`);
    return p;
  });
  return new StarlarkAspect(implementation, typeof doc === 'string' ? doc : '', stringList('aspect', 'attr_aspects', arg('attr_aspects')), ruleAttributes(arg('attrs'), 'aspect'), providers);
});
