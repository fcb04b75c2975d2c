import { Builtin, None, StarCallable, StarlarkError, typeName, unpackArgs, type Kwargs, type Thread, type Value } from '../starlark/index.js';
import type { AttributeSpec } from './rules/attribute.js';
import { NATIVE_RULE_CLASSES } from './rules/native-rules.js';
import { attributeEntries, attributeOf, COMMON_RULE_ATTRIBUTES, StarlarkRuleFunction } from './bzl-builtins.js';
import { BzlExport } from './bzl-export.js';
import { optionalDoc } from './bzl-params.js';

/**
 * The value of `macro(...)` (a symbolic macro). Kiln documents symbolic macros but does not expand
 * them in BUILD files yet: calling one is an error that says so.
 */
export class SymbolicMacro extends StarCallable {
  /** The global it is exported as. */
  readonly exported = new BzlExport();
  constructor(
    readonly implementation: StarCallable,
    readonly doc: string,
    /** Declared ones in `attrs` order, then inherited ones in their source's order (`name` and `visibility` are implicit). */
    readonly attributes: readonly AttributeSpec[],
    readonly finalizer: boolean,
  ) {
    super();
  }
  get name(): string {
    return this.exported.value?.name ?? 'macro';
  }
  get type(): string {
    return 'macro';
  }
  call(_thread: Thread, _args: Value[], _kwargs: Kwargs | null): Value {
    throw new StarlarkError(`symbolic macro ${this.name}: Kiln does not expand symbolic macros; use a legacy macro (a def) instead`);
  }
  repr(): string {
    return `<macro ${this.name}>`;
  }
}

const PARAMS = ['implementation', 'attrs?', 'inherit_attrs?', 'finalizer?', 'doc?'];

/** `macro(implementation, attrs = {}, inherit_attrs = None, finalizer = False, doc = None)`. */
export const macroBuiltin = new Builtin('macro', (_t, args, kwargs) => {
  const [implementation, attrs, inheritAttrs, finalizer, doc] = unpackArgs('macro', args, kwargs, PARAMS);
  if (!(implementation instanceof StarCallable))
    throw new StarlarkError(`macro: for parameter implementation: got ${typeName(implementation!)}, want function`);
  if (finalizer !== undefined && typeof finalizer !== 'boolean')
    throw new StarlarkError(`macro: for parameter finalizer: got ${typeName(finalizer)}, want bool`);
  return new SymbolicMacro(implementation, optionalDoc('macro', doc), macroAttributes(attrs, inheritAttrs), finalizer === true);
});

/**
 * A macro's attributes as Bazel's macro() defines them: the declared ones (an entry of `None`
 * declares none but keeps an inherited one of that name out), then those inherited from
 * `inherit_attrs` except `name`, `visibility`, hidden ones and declared names; an inherited
 * attribute that is not mandatory defaults to None.
 */
function macroAttributes(attrs: Value | undefined, inheritAttrs: Value | undefined): AttributeSpec[] {
  const entries = attributeEntries(attrs, 'macro');
  const declared = entries.filter(([, d]) => d !== None).map(([k, d]) => attributeOf('macro', k, d));
  const taken = new Set(entries.map(([k]) => k));
  const inherited = inheritableAttributes(inheritAttrs)
    .filter((a) => a.name !== 'name' && a.name !== 'visibility' && !a.name.startsWith('_') && !taken.has(a.name))
    .map((a): AttributeSpec => (a.mandatory ? a : { ...a, defaultValue: null }));
  return [...declared, ...inherited];
}

/** What `inherit_attrs` names: an exported rule (Starlark or native), a macro, or "common" (every rule's attributes). */
function inheritableAttributes(source: Value | undefined): readonly AttributeSpec[] {
  if (source === undefined || source === None) return [];
  if (source === 'common') return COMMON_RULE_ATTRIBUTES;
  if (source instanceof SymbolicMacro) return source.attributes;
  // Kiln names rules after the whole file has run, so a rule not exported yet is taken too.
  if (source instanceof StarlarkRuleFunction) return source.classAttributes;
  const nativeRule = source instanceof Builtin ? NATIVE_RULE_CLASSES.get(source.name) : undefined;
  if (nativeRule) return [...nativeRule.attributes.values()];
  throw new StarlarkError(`macro: for parameter inherit_attrs: got ${typeName(source)}, want rule, macro, "common" or None`);
}
