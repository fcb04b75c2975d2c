import { Builtin, StarCallable, StarList, StarObject, StarTuple, StarlarkError, typeName, unpackArgs } from '../starlark/index.js';
import { BzlExport } from './bzl-export.js';
import { optionalDoc, stringSequence } from './bzl-params.js';
import { Provider } from './provider.js';
import type { AttributeSpec } from './rules/attribute.js';
import { ruleAttributes } from './bzl-builtins.js';

/**
 * The value of `aspect(...)`: its implementation, the attributes it propagates along and its own
 * attributes. Like a rule, it takes the name of the first global it is bound to.
 */
export class StarlarkAspect extends StarObject {
  /** The global it is exported as. */
  readonly exported = new BzlExport();
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

/** `aspect(implementation, attr_aspects = [], attrs = {}, ..., doc = None, provides = [])`. */
export const aspectBuiltin = new Builtin('aspect', (_t, args, kwargs) => {
  if (args.length > 1) throw new StarlarkError(`aspect: got ${args.length} positional arguments, want at most 1`);
  const got = unpackArgs('aspect', args, kwargs, ASPECT_PARAMS);
  const arg = (p: string) => got[ASPECT_PARAMS.findIndex((x) => x.replace('?', '') === p)];
  const implementation = arg('implementation')!;
  if (!(implementation instanceof StarCallable))
    throw new StarlarkError(`aspect: for parameter implementation: got ${typeName(implementation)}, want function`);
  const provides = arg('provides');
  const providers = (provides instanceof StarList || provides instanceof StarTuple ? provides.elems : []).map((p) => {
    if (!(p instanceof Provider)) throw new StarlarkError(`aspect: for parameter provides: got ${typeName(p)}, want provider`);
    return p;
  });
  return new StarlarkAspect(
    implementation,
    optionalDoc('aspect', arg('doc')),
    stringSequence('aspect', 'attr_aspects', arg('attr_aspects')),
    ruleAttributes(arg('attrs'), 'aspect'),
    providers,
  );
});
