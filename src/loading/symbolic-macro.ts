import { Builtin, StarCallable, StarlarkError, typeName, unpackArgs, type Kwargs, type Thread, type Value } from '../starlark/index.js';
import type { AttributeSpec } from './rules/attribute.js';
import { ruleAttributes } from './bzl-builtins.js';
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
  const [implementation, attrs, , finalizer, doc] = unpackArgs('macro', args, kwargs, PARAMS);
  if (!(implementation instanceof StarCallable)) throw new StarlarkError(`macro: for parameter implementation: got ${typeName(implementation!)}, want function`);
  if (finalizer !== undefined && typeof finalizer !== 'boolean') throw new StarlarkError(`macro: for parameter finalizer: got ${typeName(finalizer)}, want bool`);
  return new SymbolicMacro(implementation, optionalDoc('macro', doc), ruleAttributes(attrs, 'macro'), finalizer === true);
});
