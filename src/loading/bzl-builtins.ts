import {
  Builtin,
  None,
  StarCallable,
  StarDict,
  StarList,
  StarModule,
  StarObject,
  StarTuple,
  StarlarkError,
  typeName,
  unpackArgs,
  type Kwargs,
  type Thread,
  type Value,
} from '../starlark/index.js';
import { Label, type PackageContext } from './label.js';
import { ExecGroup } from './exec-group.js';
import { ToolchainTypeRequirement } from './platform-common.js';
import { StarLabel } from './starlark-label.js';
import { Provider } from './provider.js';
import { attr as attrSpec, type AttrType, type AttributeSpec, type PlainAttrValue, type StarlarkAttributeOptions } from './rules/attribute.js';
import { ConversionError, convertAttribute } from './rules/convert.js';
import { StarlarkAspect } from './starlark-aspect.js';
import { StarlarkTransition } from './starlark-transition.js';
import { defineRuleClass, WITH_EXEC, type BuildSettingSpec, type RuleClass } from './rules/rule-class.js';

/** `attr.string(...)` and friends: an attribute schema waiting for its name. */
class AttrDescriptor extends StarObject {
  constructor(
    readonly attrType: AttrType,
    readonly mandatory: boolean,
    readonly defaultValue: PlainAttrValue | undefined,
    readonly values: readonly (string | number)[] | undefined,
    readonly options: StarlarkAttributeOptions,
  ) {
    super();
  }
  get type(): string {
    return 'Attribute';
  }
  repr(): string {
    return `<attr.${this.attrType}>`;
  }
}

/** Parameters of each `attr.*` function after the common `default`, `doc`, `mandatory`. */
const LABEL_PARAMS = ['allow_files?', 'allow_rules?', 'providers?', 'flags?', 'cfg?', 'aspects?'];
const ATTR_FUNCTIONS: Readonly<Record<string, { type: AttrType; params: readonly string[] }>> = {
  bool: { type: 'bool', params: [] },
  int: { type: 'int', params: ['values?'] },
  int_list: { type: 'int_list', params: ['allow_empty?'] },
  string: { type: 'string', params: ['values?'] },
  string_list: { type: 'string_list', params: ['allow_empty?'] },
  string_dict: { type: 'string_dict', params: ['allow_empty?'] },
  string_list_dict: { type: 'string_list_dict', params: ['allow_empty?'] },
  label: { type: 'label', params: ['executable?', 'allow_single_file?', 'skip_validations?', ...LABEL_PARAMS] },
  label_list: { type: 'label_list', params: ['allow_empty?', ...LABEL_PARAMS] },
  label_keyed_string_dict: { type: 'label_keyed_string_dict', params: ['allow_empty?', ...LABEL_PARAMS] },
  output: { type: 'output', params: [] },
  output_list: { type: 'output_list', params: ['allow_empty?'] },
  license: { type: 'license', params: [] },
};

/** `cfg = "exec"` and friends, and `config.exec()` / `config.target()` values. */
class ConfigTransition extends StarObject {
  constructor(readonly cfg: 'exec' | 'target') {
    super();
  }
  get type(): string {
    return 'transition';
  }
  repr(): string {
    return `<transition ${this.cfg}>`;
  }
}

function cfgOf(fn: string, v: Value | undefined): 'exec' | 'target' {
  if (v === undefined || v === None) return 'target';
  if (v instanceof ConfigTransition) return v.cfg;
  // A Starlark transition is kept on the attribute (`transition`); analysis applies it over the target configuration.
  if (v instanceof StarlarkTransition) return 'target';
  if (v === 'exec' || v === 'host') return 'exec';
  if (v === 'target') return 'target';
  throw new StarlarkError(`${fn}: cfg must be either 'target', 'exec' or 'host', got ${typeof v === 'string' ? `'${v}'` : typeName(v)}`);
}

/** A Provider is its own reference: its key and name are final once its global is exported. */
function providerRef(fn: string, v: Value): { readonly key: string; readonly name: string } {
  if (v instanceof Provider) return v;
  if (typeof v === 'string') return { key: v, name: v };
  throw new StarlarkError(`${fn}: for parameter providers: got ${typeName(v)}, want provider`);
}

/** `providers = [A, B]` (one set) or `[[A], [B, C]]` (alternatives). */
export function providerSets(fn: string, v: Value | undefined, param = 'providers'): StarlarkAttributeOptions['providers'] {
  if (v === undefined || v === None) return [];
  if (!(v instanceof StarList || v instanceof StarTuple)) throw new StarlarkError(`${fn}: for parameter ${param}: got ${typeName(v)}, want list`);
  if (v.elems.length === 0) return [];
  if (v.elems.every((e) => e instanceof StarList || e instanceof StarTuple)) {
    return v.elems.map((set) => (set as StarList).elems.map((p) => providerRef(fn, p)));
  }
  return [v.elems.map((p) => providerRef(fn, p))];
}

function allowFilesOf(fn: string, param: string, v: Value | undefined): true | readonly string[] | undefined {
  if (v === undefined || v === None || v === false) return undefined;
  if (v === true) return true;
  if (v instanceof StarList || v instanceof StarTuple) {
    return v.elems.map((e) => {
      if (typeof e !== 'string') throw new StarlarkError(`${fn}: for parameter ${param}: got ${typeName(e)} in the list, want string`);
      return e;
    });
  }
  throw new StarlarkError(`${fn}: for parameter ${param}: got ${typeName(v)}, want bool or sequence of strings`);
}

/** `attr.label(aspects = [...])`: the aspects applied to the attribute's dependencies. */
function aspectsParameter(fn: string, v: Value | undefined): { aspects?: readonly StarlarkAspect[] } {
  if (v === undefined || v === None) return {};
  if (!(v instanceof StarList || v instanceof StarTuple)) throw new StarlarkError(`${fn}: for parameter aspects: got ${typeName(v)}, want list`);
  for (const [i, e] of v.elems.entries()) {
    if (!(e instanceof StarlarkAspect)) throw new StarlarkError(`${fn}: for parameter aspects: got element of type ${typeName(e)}, want Aspect`);
    // Kiln names a global once its file is evaluated: an aspect of this same file has no key yet.
    if (v.elems.indexOf(e) !== i) throw new StarlarkError(e.key === undefined ? 'aspect added more than once' : `aspect ${e.key} added more than once`);
  }
  return v.elems.length === 0 ? {} : { aspects: v.elems as StarlarkAspect[] };
}

function attrFunction(fn: string, type: AttrType, params: readonly string[], context: PackageContext): Builtin {
  const name = `attr.${fn}`;
  const all = ['default?', 'doc?', 'mandatory?', ...params];
  return new Builtin(name, (_t, args, kwargs) => {
    if (args.length > 0) throw new StarlarkError(`${name}: got ${args.length} positional arguments, want 0`);
    const got = unpackArgs(name, args, kwargs, all);
    const arg = (p: string) => got[all.findIndex((x) => x.replace('?', '') === p)];
    const flag = (p: string) => {
      const v = arg(p);
      if (v === undefined) return undefined;
      if (typeof v !== 'boolean') throw new StarlarkError(`${name}: for parameter ${p}: got ${typeName(v)}, want bool`);
      return v;
    };
    const doc = arg('doc');
    if (doc !== undefined && doc !== None && typeof doc !== 'string') throw new StarlarkError(`${name}: for parameter doc: got ${typeName(doc)}, want string`);
    const single = allowFilesOf(name, 'allow_single_file', arg('allow_single_file'));
    const allowFiles = allowFilesOf(name, 'allow_files', arg('allow_files'));
    if (single !== undefined && allowFiles !== undefined) throw new StarlarkError('Cannot specify both allow_files and allow_single_file');
    const executable = flag('executable') ?? false;
    if (executable && (arg('cfg') === undefined || arg('cfg') === None))
      throw new StarlarkError('cfg parameter is mandatory when executable=True is provided.');
    const valuesArg = arg('values');
    let values: (string | number)[] | undefined;
    if (valuesArg !== undefined && valuesArg !== None) {
      if (!(valuesArg instanceof StarList || valuesArg instanceof StarTuple))
        throw new StarlarkError(`${name}: for parameter values: got ${typeName(valuesArg)}, want list`);
      values = valuesArg.elems.map((e) => {
        if (typeof e !== (type === 'int' ? 'number' : 'string'))
          throw new StarlarkError(`${name}: for parameter values: got ${typeName(e)} in the list, want ${type === 'int' ? 'int' : 'string'}`);
        return e as string | number;
      });
    }
    const options: StarlarkAttributeOptions = {
      doc: typeof doc === 'string' ? doc : '',
      ...(single !== undefined ? { allowFiles: single } : allowFiles !== undefined ? { allowFiles } : {}),
      singleFile: single !== undefined,
      executable,
      cfg: cfgOf(name, arg('cfg')),
      ...(arg('cfg') instanceof StarlarkTransition ? { transition: arg('cfg') as StarlarkTransition } : {}),
      providers: providerSets(name, arg('providers')),
      allowEmpty: flag('allow_empty') ?? true,
      ...aspectsParameter(name, arg('aspects')),
    };
    // The default is checked like any value of the type; labels are relative to the .bzl file's package.
    const defaultArg = arg('default');
    let defaultValue: PlainAttrValue | undefined;
    if (defaultArg !== undefined && !(defaultArg === None && (type === 'label' || type === 'output'))) {
      try {
        defaultValue = convertAttribute(attrSpec('default', type), defaultArg, context, name) as PlainAttrValue;
      } catch (e) {
        if (e instanceof ConversionError) throw new StarlarkError(`${name}: for parameter default: ${e.message}`, { cause: e });
        throw e;
      }
    }
    return new AttrDescriptor(type, flag('mandatory') ?? false, defaultValue, values?.length ? values : undefined, options);
  });
}

/** The `attr` module of a .bzl file (label defaults are relative to `context`, the file's package). */
export function attrModule(context: PackageContext): StarModule {
  return new StarModule('attr', new Map(Object.entries(ATTR_FUNCTIONS).map(([fn, { type, params }]) => [fn, attrFunction(fn, type, params, context)])));
}

/** `config.string(flag = False)`...: what a rule's `build_setting` is. */
class BuildSettingDescriptor extends StarObject {
  constructor(readonly spec: BuildSettingSpec) {
    super();
  }
  get type(): string {
    return 'BuildSetting';
  }
  repr(): string {
    return `<build_setting ${this.spec.type}>`;
  }
}

function settingFunction(type: BuildSettingSpec['type']): Builtin {
  return new Builtin(`config.${type}`, (_t, args, kwargs) => {
    const [flag] = unpackArgs(`config.${type}`, args, kwargs, type === 'string_list' ? ['flag?', 'repeatable?'] : ['flag?']);
    if (flag !== undefined && typeof flag !== 'boolean') throw new StarlarkError(`config.${type}: for parameter flag: got ${typeName(flag)}, want bool`);
    return new BuildSettingDescriptor({ type, flag: flag === true });
  });
}

/** The `config` module: build setting types and the `exec`/`target` transitions. */
export const configModule = new StarModule(
  'config',
  new Map<string, Value>([
    ['string', settingFunction('string')],
    ['int', settingFunction('int')],
    ['bool', settingFunction('bool')],
    ['string_list', settingFunction('string_list')],
    ['exec', new Builtin('config.exec', (_t, args, kwargs) => (unpackArgs('config.exec', args, kwargs, ['exec_group?']), new ConfigTransition('exec')))],
    ['target', new Builtin('config.target', (_t, args, kwargs) => (unpackArgs('config.target', args, kwargs, []), new ConfigTransition('target')))],
  ]),
);

/** Attributes Bazel gives every executable or test rule, and test rules only. */
const TOOLCHAINS_ATTRIBUTE = attrSpec('toolchains', 'label_list', { configurable: false });

/** The attributes every Starlark rule has (`macro(inherit_attrs = "common")`), in a rule class's order. */
export const COMMON_RULE_ATTRIBUTES: readonly AttributeSpec[] = [
  ...defineRuleClass('common', { common: WITH_EXEC, attributes: [TOOLCHAINS_ATTRIBUTE] }).attributes.values(),
];

const EXECUTABLE_ATTRIBUTES = [attrSpec('args', 'string_list'), attrSpec('env', 'string_dict'), attrSpec('output_licenses', 'license')];
const TEST_ATTRIBUTES = [
  attrSpec('size', 'string', { configurable: false, default: 'medium', values: ['small', 'medium', 'large', 'enormous'] }),
  attrSpec('timeout', 'string', { configurable: false, default: null, values: ['short', 'moderate', 'long', 'eternal'] }),
  attrSpec('flaky', 'bool', { configurable: false }),
  attrSpec('shard_count', 'int', { configurable: false, default: -1 }),
  attrSpec('local', 'bool'),
];

export interface StarlarkRuleOptions {
  readonly implementation: StarCallable;
  readonly test: boolean;
  readonly executable: boolean;
  readonly doc: string;
  readonly implicitOutputs: readonly (readonly [string, string])[];
  readonly provides: readonly { readonly key: string; readonly name: string }[];
  readonly buildSetting?: BuildSettingSpec;
  readonly outputToGenfiles: boolean;
  /** `toolchains`: the toolchain types the rule asks for (canonical labels), each mandatory or not. */
  readonly toolchains: readonly ToolchainRequest[];
  /** `exec_compatible_with`: constraint values every execution platform of the rule's targets must have. */
  readonly execCompatibleWith: readonly string[];
  /** `exec_groups`: named execution groups, each with its own toolchains and execution platform. */
  readonly execGroups: readonly ExecGroupSpec[];
  /** `cfg = transition(...)`: the incoming transition. */
  readonly incomingTransition?: StarlarkTransition;
  readonly analysisTest?: boolean;
  readonly starlarkTestable?: boolean;
  /** `fragments`: the configuration fragments the implementation may read from `ctx.fragments`. */
  readonly fragments: readonly string[];
}

/** One entry of `rule(exec_groups = {...})`, labels canonical. */
export interface ExecGroupSpec {
  readonly name: string;
  readonly toolchains: readonly ToolchainRequest[];
  readonly execCompatibleWith: readonly string[];
}

/** One entry of `rule(toolchains = [...])`: a toolchain type label, or `config_common.toolchain_type(...)`. */
export interface ToolchainRequest {
  readonly type: string;
  readonly mandatory: boolean;
}

/** The value of `rule(...)`: exported under a global name, then callable from BUILD threads. */
export class StarlarkRuleFunction extends StarCallable {
  ruleClass: RuleClass | undefined;
  constructor(
    readonly attributes: readonly AttributeSpec[],
    readonly options: StarlarkRuleOptions,
    /** Declares a target; supplied by the BUILD-file environment. */
    private readonly declare: (thread: Thread, ruleClass: RuleClass, kwargs: Kwargs | null) => void,
  ) {
    super();
  }
  get name(): string {
    return this.ruleClass?.name ?? 'rule';
  }
  get type(): string {
    return 'rule';
  }
  get implementation(): StarCallable {
    return this.options.implementation;
  }
  /** Bazel names a Starlark rule after the global it is first assigned to. */
  export(name: string, bzlLabel: string): void {
    if (this.ruleClass) return;
    if (this.options.test !== name.endsWith('_test')) {
      throw new StarlarkError(`Invalid rule class name '${name}', test rule class names must end with '_test' and other rule classes must not`);
    }
    const rc = this.classNamed(name);
    this.ruleClass = {
      ...rc,
      starlarkDefined: true,
      starlark: {
        key: `${bzlLabel}%${name}`,
        doc: this.options.doc,
        implicitOutputs: this.options.implicitOutputs,
        provides: this.options.provides.map((p) => p.name),
        toolchains: this.options.toolchains,
        execCompatibleWith: this.options.execCompatibleWith,
        execGroups: this.options.execGroups,
        ...(this.options.buildSetting ? { buildSetting: this.options.buildSetting } : {}),
        ...(this.options.incomingTransition ? { incomingTransition: this.options.incomingTransition } : {}),
        ...(this.options.analysisTest ? { analysisTest: true } : {}),
        ...(this.options.starlarkTestable ? { starlarkTestable: true } : {}),
      },
    };
  }
  /** Every attribute of the rule's class, the common ones first, whether or not the rule is exported yet. */
  get classAttributes(): readonly AttributeSpec[] {
    return [...(this.ruleClass ?? this.classNamed(this.name)).attributes.values()];
  }
  private classNamed(name: string): RuleClass {
    const { test, executable, buildSetting } = this.options;
    return defineRuleClass(name, {
      common: WITH_EXEC,
      isTest: test,
      executable: executable || test,
      attributes: [
        ...(executable || test ? EXECUTABLE_ATTRIBUTES : []),
        ...(test ? TEST_ATTRIBUTES : []),
        TOOLCHAINS_ATTRIBUTE,
        ...(buildSetting
          ? [attrSpec('build_setting_default', buildSetting.type === 'label' ? 'label' : buildSetting.type, { mandatory: true, configurable: false })]
          : []),
        ...this.attributes,
      ],
    });
  }
  call(thread: Thread, args: Value[], kwargs: Kwargs | null): Value {
    if (!this.ruleClass) throw new StarlarkError("Invalid rule class hasn't been exported by a bzl file");
    if (args.length > 0) throw new StarlarkError(`${this.ruleClass.name}: unexpected positional arguments`);
    this.declare(thread, this.ruleClass, kwargs);
    return None;
  }
  repr(): string {
    return `<rule ${this.name}>`;
  }
}

/** A `rule()` parameter that is a list of strings (`fragments`). */
function stringsOf(v: Value | undefined, param: string): string[] {
  if (v === undefined || v === None) return [];
  const elems = v instanceof StarList || v instanceof StarTuple ? v.elems : undefined;
  if (!elems || elems.some((e) => typeof e !== 'string')) throw new StarlarkError(`rule: for parameter ${param}: got ${typeName(v)}, want sequence of strings`);
  return elems as string[];
}

const RULE_PARAMS = [
  'implementation',
  'test?',
  'attrs?',
  'outputs?',
  'executable?',
  'output_to_genfiles?',
  'fragments?',
  'host_fragments?',
  '_skylark_testable?',
  'toolchains?',
  'doc?',
  'provides?',
  'exec_compatible_with?',
  'analysis_test?',
  'build_setting?',
  'cfg?',
  'exec_groups?',
  'initializer?',
  'parent?',
  'extendable?',
  'subrules?',
];

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const BUILT_IN_ATTRIBUTES = new Set(['name']);

/** The entries of an `attrs` dict of `rule()` (and of `aspect()`, `macro()`, ..., named by `fn`), keys checked. */
export function attributeEntries(attrs: Value | undefined, fn: string): (readonly [string, Value])[] {
  if (attrs === undefined || attrs === None) return [];
  if (!(attrs instanceof StarDict)) throw new StarlarkError(`${fn}: for parameter attrs: got ${typeName(attrs)}, want dict`);
  return [...attrs.iterate()].map((k) => {
    if (typeof k !== 'string') throw new StarlarkError(`${fn}: for parameter attrs: got ${typeName(k)} key, want string`);
    if (!IDENTIFIER.test(k)) throw new StarlarkError(`attribute name \`${k}\` is not a valid identifier.`);
    if (BUILT_IN_ATTRIBUTES.has(k)) throw new StarlarkError(`There is already a built-in attribute '${k}' which cannot be overridden`);
    return [k, attrs.get(k)!] as const;
  });
}

/** One `attrs` entry as a schema: its value must be an `attr.*` result. */
export function attributeOf(fn: string, name: string, d: Value): AttributeSpec {
  if (!(d instanceof AttrDescriptor)) throw new StarlarkError(`${fn}: for parameter attrs: got ${typeName(d)} for '${name}', want Attribute`);
  return attrSpec(name, d.attrType, {
    mandatory: d.mandatory,
    ...(d.defaultValue !== undefined ? { default: d.defaultValue } : {}),
    ...(d.values ? { values: d.values } : {}),
    starlark: d.options,
  });
}

/** The `attrs` dict of `rule()` (and of `aspect()`, `repository_rule()`, `tag_class()`, named by `fn`). */
export function ruleAttributes(attrs: Value | undefined, fn = 'rule'): AttributeSpec[] {
  return attributeEntries(attrs, fn).map(([k, d]) => attributeOf(fn, k, d));
}

function implicitOutputsOf(outputs: Value | undefined): [string, string][] {
  if (outputs === undefined || outputs === None) return [];
  if (!(outputs instanceof StarDict)) throw new StarlarkError(`rule: for parameter outputs: got ${typeName(outputs)}, want dict or None`);
  const out: [string, string][] = [];
  for (const k of outputs.iterate()) {
    const template = outputs.get(k)!;
    if (typeof k !== 'string' || !IDENTIFIER.test(k)) throw new StarlarkError(`rule: outputs: invalid key ${typeof k === 'string' ? `'${k}'` : typeName(k)}`);
    if (typeof template !== 'string') throw new StarlarkError(`rule: outputs: expected string template for '${k}', got ${typeName(template)}`);
    out.push([k, template]);
  }
  return out;
}

const EXEC_GROUP_NAME = /^[a-z_][a-z0-9_-]*$/;

/** `rule(exec_groups = {"name": exec_group(...)})`. */
function execGroupsOf(v: Value | undefined, context: PackageContext | undefined): ExecGroupSpec[] {
  if (v === undefined || v === None) return [];
  if (!(v instanceof StarDict)) throw new StarlarkError(`rule: for parameter exec_groups: got ${typeName(v)}, want dict or None`);
  return [...v.iterate()].map((name) => {
    const group = v.get(name);
    if (typeof name !== 'string' || !EXEC_GROUP_NAME.test(name)) throw new StarlarkError(`Exec group name '${String(name)}' is not a valid name.`);
    if (!(group instanceof ExecGroup)) throw new StarlarkError(`rule: for parameter exec_groups: got ${typeName(group!)} for '${name}', want ExecGroup`);
    return {
      name,
      toolchains: labelSequence(new StarList([...group.toolchains]), 'exec_groups', context).map((t) =>
        typeof t === 'string' ? { type: t, mandatory: true } : t,
      ),
      execCompatibleWith: labelSequence(new StarList([...group.execCompatibleWith]), 'exec_groups', context).map((t) => (typeof t === 'string' ? t : t.type)),
    };
  });
}

/** A `rule()` parameter that lists labels (strings relative to the .bzl's package, Labels, toolchain types). */
export function labelSequence(v: Value | undefined, param: string, context: PackageContext | undefined, fn = 'rule'): (string | ToolchainRequest)[] {
  if (v === undefined || v === None) return [];
  if (!(v instanceof StarList || v instanceof StarTuple)) throw new StarlarkError(`${fn}: for parameter ${param}: got ${typeName(v)}, want sequence`);
  return v.elems.map((e) => {
    if (e instanceof ToolchainTypeRequirement) return { type: e.toolchainType.toString(), mandatory: e.mandatory };
    if (e instanceof StarLabel) return e.label.toString();
    if (typeof e !== 'string') throw new StarlarkError(`${fn}: for parameter ${param}: got ${typeName(e)} element, want string or Label`);
    try {
      return Label.parse(e, context).toString();
    } catch (err) {
      throw new StarlarkError(`${fn}: for parameter ${param}: ${(err as Error).message}`, { cause: err });
    }
  });
}

/** `rule(cfg = ...)`: a Starlark transition, or None / "target" / `config.target()` for none. */
function incomingTransitionOf(v: Value | undefined): StarlarkTransition | undefined {
  if (v === undefined || v === None || v === 'target' || (v instanceof ConfigTransition && v.cfg === 'target')) return undefined;
  if (v instanceof StarlarkTransition && v.kind !== 'analysis_test_transition') return v;
  throw new StarlarkError(`\`cfg\` must be set to a transition object initialized by the transition() function.`);
}

/** Bazel's rule() checks of analysis_test_transition, in its words (StarlarkRuleClassFunctions). */
function checkAnalysisTestTransitions(attributes: readonly AttributeSpec[], analysisTest: boolean): void {
  if (analysisTest) return;
  for (const a of attributes) {
    if (a.starlark?.transition?.kind === 'analysis_test_transition') {
      throw new StarlarkError('Only rule definitions with analysis_test=True may have attributes with analysis_test_transition transitions');
    }
  }
}

/** `rule(implementation, test, attrs, outputs, executable, ..., doc, provides, build_setting, ...)`. */
export function ruleBuiltin(declare: (thread: Thread, ruleClass: RuleClass, kwargs: Kwargs | null) => void, context?: PackageContext): Builtin {
  return new Builtin('rule', (_t, args, kwargs) => {
    if (args.length > 1) throw new StarlarkError(`rule: got ${args.length} positional arguments, want at most 1`);
    const got = unpackArgs('rule', args, kwargs, RULE_PARAMS);
    const arg = (p: string) => got[RULE_PARAMS.findIndex((x) => x.replace('?', '') === p)];
    const implementation = arg('implementation')!;
    if (!(implementation instanceof StarCallable))
      throw new StarlarkError(`rule: for parameter implementation: got ${typeName(implementation)}, want function`);
    const bool = (p: string) => {
      const v = arg(p);
      if (v === undefined || v === None) return false;
      if (typeof v !== 'boolean') throw new StarlarkError(`rule: for parameter ${p}: got ${typeName(v)}, want bool`);
      return v;
    };
    const doc = arg('doc');
    if (doc !== undefined && doc !== None && typeof doc !== 'string') throw new StarlarkError(`rule: for parameter doc: got ${typeName(doc)}, want string`);
    const setting = arg('build_setting');
    if (setting !== undefined && setting !== None && !(setting instanceof BuildSettingDescriptor)) {
      throw new StarlarkError(`rule: for parameter build_setting: got ${typeName(setting)}, want BuildSetting or None`);
    }
    const provides = arg('provides');
    if (provides !== undefined && !(provides instanceof StarList || provides instanceof StarTuple))
      throw new StarlarkError(`rule: for parameter provides: got ${typeName(provides)}, want list`);
    const analysisTest = bool('analysis_test');
    // An analysis test is a test rule (Bazel's RuleClassType.TEST), whether or not `test` says so.
    const test = bool('test') || analysisTest;
    const attributes = ruleAttributes(arg('attrs'));
    const incoming = incomingTransitionOf(arg('cfg'));
    checkAnalysisTestTransitions(attributes, analysisTest);
    return new StarlarkRuleFunction(
      attributes,
      {
        implementation,
        test,
        executable: bool('executable'),
        doc: typeof doc === 'string' ? doc : '',
        implicitOutputs: implicitOutputsOf(arg('outputs')),
        provides: (provides?.elems ?? []).map((p) => providerRef('rule', p)),
        outputToGenfiles: bool('output_to_genfiles'),
        toolchains: labelSequence(arg('toolchains'), 'toolchains', context).map((t) => (typeof t === 'string' ? { type: t, mandatory: true } : t)),
        execCompatibleWith: labelSequence(arg('exec_compatible_with'), 'exec_compatible_with', context).map((t) => (typeof t === 'string' ? t : t.type)),
        execGroups: execGroupsOf(arg('exec_groups'), context),
        fragments: stringsOf(arg('fragments'), 'fragments'),
        ...(setting instanceof BuildSettingDescriptor ? { buildSetting: setting.spec } : {}),
        ...(incoming ? { incomingTransition: incoming } : {}),
        ...(analysisTest ? { analysisTest } : {}),
        ...(bool('_skylark_testable') ? { starlarkTestable: true } : {}),
      },
      declare,
    );
  });
}
