import { Builtin, None, StarCallable, StarList, StarTuple, StarlarkError, typeName, unpackArgs, type Kwargs, type Thread, type Value } from '../starlark/index.js';
import type { AttributeSpec } from './rules/attribute.js';
import { ruleAttributes } from './bzl-builtins.js';

/**
 * The value of `repository_rule(...)`. Kiln fetches no external repositories through Starlark, so
 * calling one is an error; the value exists so .bzl files that declare one load and are documented.
 */
export class RepositoryRule extends StarCallable {
  private exported: { readonly name: string; readonly bzlLabel: string } | undefined;
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
    return this.exported?.name ?? 'repository_rule';
  }
  get type(): string {
    return 'repository_rule';
  }
  get isExported(): boolean {
    return this.exported !== undefined;
  }
  get exportedAs(): { readonly name: string; readonly bzlLabel: string } | undefined {
    return this.exported;
  }
  export(name: string, bzlLabel: string): void {
    this.exported ??= { name, bzlLabel };
  }
  call(_thread: Thread, _args: Value[], _kwargs: Kwargs | null): Value {
    throw new StarlarkError(`repository rule ${this.name} can only be called from a WORKSPACE file or a module extension, which Kiln does not evaluate`);
  }
  repr(): string {
    return `<repository_rule ${this.name}>`;
  }
}

export function stringSequence(fn: string, param: string, v: Value | undefined): string[] {
  if (v === undefined || v === None) return [];
  if (!(v instanceof StarList || v instanceof StarTuple)) throw new StarlarkError(`${fn}: for parameter ${param}: got ${typeName(v)}, want sequence of strings`);
  return v.elems.map((e) => {
    if (typeof e !== 'string') throw new StarlarkError(`${fn}: for parameter ${param}: got ${typeName(e)} in the list, want string`);
    return e;
  });
}

export function optionalDoc(fn: string, v: Value | undefined): string {
  if (v === undefined || v === None) return '';
  if (typeof v !== 'string') throw new StarlarkError(`${fn}: for parameter doc: got ${typeName(v)}, want string`);
  return v;
}

const PARAMS = ['implementation', 'attrs?', 'local?', 'environ?', 'configure?', 'remotable?', 'doc?'];

/** `repository_rule(implementation, attrs = None, local = False, environ = [], configure = False, remotable = False, doc = None)`. */
export const repositoryRuleBuiltin = new Builtin('repository_rule', (_t, args, kwargs) => {
  const [implementation, attrs, , environ, , , doc] = unpackArgs('repository_rule', args, kwargs, PARAMS);
  if (!(implementation instanceof StarCallable)) throw new StarlarkError(`repository_rule: for parameter implementation: got ${typeName(implementation!)}, want function`);
  return new RepositoryRule(implementation, optionalDoc('repository_rule', doc), ruleAttributes(attrs, 'repository_rule'), stringSequence('repository_rule', 'environ', environ));
});
