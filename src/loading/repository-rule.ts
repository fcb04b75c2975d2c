import { Builtin, StarCallable, StarlarkError, typeName, unpackArgs, type Kwargs, type Thread, type Value } from '../starlark/index.js';
import { BzlExport } from './bzl-export.js';
import { optionalDoc, stringSequence } from './bzl-params.js';
import type { AttributeSpec } from './rules/attribute.js';
import { ruleAttributes } from './bzl-builtins.js';

/**
 * The value of `repository_rule(...)`. Kiln fetches no external repositories through Starlark, so
 * calling one is an error; the value exists so .bzl files that declare one load and are documented.
 */
export class RepositoryRule extends StarCallable {
  /** The global it is exported as. */
  readonly exported = new BzlExport();
  constructor(
    readonly implementation: StarCallable,
    readonly doc: string,
    readonly attributes: readonly AttributeSpec[],
    /** `environ`: environment variables the rule depends on. */
    readonly environ: readonly string[],
  ) {
    super();
  }
  get name(): string {
    return this.exported.value?.name ?? 'repository_rule';
  }
  get type(): string {
    return 'repository_rule';
  }
  call(_thread: Thread, _args: Value[], _kwargs: Kwargs | null): Value {
    throw new StarlarkError(`repository rule ${this.name} can only be called from a WORKSPACE file or a module extension, which Kiln does not evaluate`);
  }
  repr(): string {
    return `<repository_rule ${this.name}>`;
  }
}

const PARAMS = ['implementation', 'attrs?', 'local?', 'environ?', 'configure?', 'remotable?', 'doc?'];

/** `repository_rule(implementation, attrs = None, local = False, environ = [], configure = False, remotable = False, doc = None)`. */
export const repositoryRuleBuiltin = new Builtin('repository_rule', (_t, args, kwargs) => {
  const [implementation, attrs, , environ, , , doc] = unpackArgs('repository_rule', args, kwargs, PARAMS);
  if (!(implementation instanceof StarCallable))
    throw new StarlarkError(`repository_rule: for parameter implementation: got ${typeName(implementation!)}, want function`);
  return new RepositoryRule(
    implementation,
    optionalDoc('repository_rule', doc),
    ruleAttributes(attrs, 'repository_rule'),
    stringSequence('repository_rule', 'environ', environ),
  );
});
