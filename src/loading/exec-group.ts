import { Builtin, None, StarCallable, StarList, StarObject, StarTuple, StarlarkError, typeName, unpackArgs, type Value } from '../starlark/index.js';
import { ruleAttributes } from './bzl-builtins.js';
import { stringSequence } from './bzl-params.js';
import type { AttributeSpec } from './rules/attribute.js';

/**
 * `exec_group(toolchains = [], exec_compatible_with = [])`: an execution group for `rule(exec_groups = {...})`.
 * Loading keeps its toolchain types and constraints (strings, Labels or `config_common.toolchain_type`
 * values, as written); choosing its execution platform is analysis's work.
 */
export class ExecGroup extends StarObject {
  constructor(
    readonly toolchains: readonly Value[],
    readonly execCompatibleWith: readonly string[],
  ) {
    super();
  }
  get type(): string {
    return 'ExecGroup';
  }
  repr(): string {
    return '<exec_group>';
  }
}

function sequence(fn: string, param: string, v: Value | undefined): Value[] {
  if (v === undefined || v === None) return [];
  if (!(v instanceof StarList || v instanceof StarTuple)) throw new StarlarkError(`${fn}: for parameter ${param}: got ${typeName(v)}, want sequence`);
  return [...v.elems];
}

export const execGroupBuiltin = new Builtin('exec_group', (_t, args, kwargs) => {
  const [toolchains, compatible] = unpackArgs('exec_group', args, kwargs, ['toolchains?', 'exec_compatible_with?', 'copy_from_rule?']);
  return new ExecGroup(sequence('exec_group', 'toolchains', toolchains), stringSequence('exec_group', 'exec_compatible_with', compatible));
});

/**
 * `subrule(implementation, attrs = {}, toolchains = [], fragments = [], subrules = [])`: made at a
 * file's top level like a rule, so files declaring one load; Kiln cannot run one yet, so calling it
 * (from a rule's implementation) fails, saying so.
 */
export class Subrule extends StarCallable {
  constructor(
    readonly implementation: StarCallable,
    readonly attributes: readonly AttributeSpec[],
  ) {
    super();
  }
  get name(): string {
    return 'subrule';
  }
  get type(): string {
    return 'subrule';
  }
  call(): Value {
    throw new StarlarkError('subrule is not supported by Kiln');
  }
  repr(): string {
    return '<subrule>';
  }
}

export const subruleBuiltin = new Builtin('subrule', (_t, args, kwargs) => {
  const [implementation, attrs] = unpackArgs('subrule', args, kwargs, ['implementation', 'attrs?', 'toolchains?', 'fragments?', 'subrules?']);
  if (!(implementation instanceof StarCallable))
    throw new StarlarkError(`subrule: for parameter implementation: got ${typeName(implementation!)}, want function`);
  return new Subrule(implementation, ruleAttributes(attrs, 'subrule'));
});
