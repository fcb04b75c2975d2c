import { Builtin, None, StarDict, StarModule, StarObject, StarlarkError, typeName, unpackArgs, type Kwargs, type Value } from '../starlark/index.js';
import { Label, type PackageContext } from './label.js';
import { BuiltinProvider, ProviderInstance, wantType } from './provider.js';
import { StarLabel } from './starlark-label.js';
import { unsupported } from './unsupported.js';

/** `platform_common.ToolchainInfo(**fields)`: what a toolchain rule returns; any fields. */
export const TOOLCHAIN_INFO = new BuiltinProvider('ToolchainInfo', undefined);

/** `platform_common.TemplateVariableInfo(vars)`: Make variables (a dict of strings) under `variables`. */
export const TEMPLATE_VARIABLE_INFO = new (class extends BuiltinProvider {
  override instantiate(args: Value[], kwargs: Kwargs | null): ProviderInstance {
    const [vars] = unpackArgs('TemplateVariableInfo', args, kwargs, ['vars']);
    const ok = vars instanceof StarDict && [...vars.iterate()].every((k) => typeof k === 'string' && typeof vars.get(k) === 'string');
    wantType('TemplateVariableInfo', 'vars', vars!, ok, 'dict of strings');
    return new ProviderInstance(this, [['variables', vars!]]);
  }
})('TemplateVariableInfo', ['variables']);

/** `ConstraintSettingInfo`: a constraint_setting target's provider (`label`, `default_constraint_value`, `has_default_constraint_value`). */
export const CONSTRAINT_SETTING_INFO = new BuiltinProvider('ConstraintSettingInfo', ['label', 'default_constraint_value', 'has_default_constraint_value']);

/** `ConstraintValueInfo`: a constraint_value target's provider (`label`, `constraint`: its ConstraintSettingInfo). */
export const CONSTRAINT_VALUE_INFO = new BuiltinProvider('ConstraintValueInfo', ['label', 'constraint']);

/** `PlatformInfo`: a platform target's provider (`label`, `constraints`, `exec_properties`). */
export const PLATFORM_INFO = new BuiltinProvider('PlatformInfo', ['label', 'constraints', 'exec_properties']);

/** The `platform_common` module. */
export const platformCommonModule = new StarModule(
  'platform_common',
  new Map<string, Value>([
    ['ToolchainInfo', TOOLCHAIN_INFO],
    ['TemplateVariableInfo', TEMPLATE_VARIABLE_INFO],
    ['ConstraintSettingInfo', CONSTRAINT_SETTING_INFO],
    ['ConstraintValueInfo', CONSTRAINT_VALUE_INFO],
    ['PlatformInfo', PLATFORM_INFO],
  ]),
);

/**
 * `config_common.toolchain_type(name, *, mandatory = True)`: a toolchain requirement for `rule(toolchains = [...])`
 * and `exec_group(toolchains = [...])`; an optional one (`mandatory = False`) resolves to None when no toolchain matches.
 */
export class ToolchainTypeRequirement extends StarObject {
  constructor(
    readonly toolchainType: Label,
    readonly mandatory: boolean,
  ) {
    super();
  }
  get type(): string {
    return 'toolchain_type';
  }
  override attr(name: string): Value | undefined {
    if (name === 'toolchain_type') return new StarLabel(this.toolchainType);
    if (name === 'mandatory') return this.mandatory;
    return undefined;
  }
  override attrNames(): string[] {
    return ['mandatory', 'toolchain_type'];
  }
  repr(): string {
    return `config_common.toolchain_type(${this.toolchainType}, mandatory = ${this.mandatory ? 'True' : 'False'})`;
  }
}

function labelOf(fn: string, v: Value, context: PackageContext): Label {
  if (v instanceof StarLabel) return v.label;
  if (typeof v !== 'string') throw new StarlarkError(`${fn}: for parameter name: got ${typeName(v)}, want string or Label`);
  try {
    return Label.parse(v, context);
  } catch (e) {
    throw new StarlarkError(`${fn}: ${(e as Error).message}`, { cause: e });
  }
}

/** The `config_common` module of a .bzl file (toolchain type labels are relative to `context`, the file's package). */
export function configCommonModule(context: PackageContext): StarModule {
  const toolchainType = new Builtin('toolchain_type', (_t, args, kwargs) => {
    const [name, mandatory] = unpackArgs('toolchain_type', args, kwargs, ['name', 'mandatory?']);
    if (mandatory !== undefined && mandatory !== None && typeof mandatory !== 'boolean')
      throw new StarlarkError(`toolchain_type: for parameter mandatory: got ${typeName(mandatory)}, want bool`);
    return new ToolchainTypeRequirement(labelOf('toolchain_type', name!, context), mandatory !== false);
  });
  return new StarModule(
    'config_common',
    new Map<string, Value>([
      ['toolchain_type', toolchainType],
      ['FeatureFlagInfo', unsupported('config_common.FeatureFlagInfo', 'provider')],
    ]),
  );
}
