import {
  Builtin,
  None,
  repr,
  StarCallable,
  StarDict,
  StarList,
  StarModule,
  StarObject,
  StarStruct,
  StarTuple,
  StarlarkError,
  unpackArgs,
  type Kwargs,
  type ReprPath,
  type Thread,
  type Value,
} from '../starlark/index.js';
import { attr as attrSpec, type AttrType, type AttributeSpec, type PlainAttrValue } from './rules/attribute.js';
import { defineRuleClass, WITH_EXEC, type RuleClass } from './rules/rule-class.js';

/** `attr.string(...)` and friends: an attribute schema waiting for its name. */
export class AttrDescriptor extends StarObject {
  constructor(
    readonly attrType: AttrType,
    readonly mandatory: boolean,
    readonly defaultValue: PlainAttrValue | undefined,
    readonly values: readonly (string | number)[] | undefined,
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

function plainDefault(v: Value | undefined): PlainAttrValue | undefined {
  if (v === undefined || v === None) return undefined;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (v instanceof StarList || v instanceof StarTuple) return v.elems.filter((e) => typeof e === 'string') as string[];
  if (v instanceof StarDict) {
    const out: [string, string][] = [];
    for (const k of v.iterate()) if (typeof k === 'string' && typeof v.get(k) === 'string') out.push([k, v.get(k) as string]);
    return out;
  }
  return undefined;
}

const ATTR_FUNCTIONS: Readonly<Record<string, AttrType>> = {
  string: 'string',
  int: 'int',
  bool: 'bool',
  label: 'label',
  label_list: 'label_list',
  string_list: 'string_list',
  int_list: 'string_list',
  string_dict: 'string_dict',
  string_list_dict: 'string_list_dict',
  label_keyed_string_dict: 'label_keyed_string_dict',
  output: 'output',
  output_list: 'output_list',
  license: 'license',
};

/** The `attr` module of .bzl files. Keyword arguments other than default/mandatory/values are accepted as data. */
export const attrModule = new StarModule(
  'attr',
  new Map(
    Object.entries(ATTR_FUNCTIONS).map(([fn, type]) => [
      fn,
      new Builtin(`attr.${fn}`, (_t, args, kwargs) => {
        if (args.length > 0) throw new StarlarkError(`attr.${fn}: got ${args.length} positional arguments, want 0`);
        let mandatory = false;
        let def: Value | undefined;
        let values: (string | number)[] | undefined;
        for (const [k, v] of kwargs ?? []) {
          if (k === 'mandatory') mandatory = v === true;
          else if (k === 'default') def = v;
          else if (k === 'values' && (v instanceof StarList || v instanceof StarTuple)) {
            values = v.elems.filter((e) => typeof e === 'string' || typeof e === 'number') as (string | number)[];
          }
        }
        return new AttrDescriptor(type, mandatory, plainDefault(def), values?.length ? values : undefined);
      }),
    ]),
  ),
);

/** The value of `rule(...)`: exported under a global name, then callable from BUILD threads. */
export class StarlarkRuleFunction extends StarCallable {
  ruleClass: RuleClass | undefined;
  constructor(
    private readonly attributes: readonly AttributeSpec[],
    private readonly options: { test: boolean; executable: boolean },
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
  /** Bazel names a Starlark rule after the global it is first assigned to. */
  export(name: string): void {
    if (this.ruleClass) return;
    const test = this.options.test;
    const rc = defineRuleClass(name, {
      common: WITH_EXEC,
      isTest: test,
      executable: this.options.executable || test,
      attributes: [
        ...(this.options.executable || test ? [attrSpec('args', 'string_list'), attrSpec('env', 'string_dict'), attrSpec('output_licenses', 'license')] : []),
        ...(test
          ? [
              attrSpec('size', 'string', { configurable: false, default: 'medium', values: ['small', 'medium', 'large', 'enormous'] }),
              attrSpec('timeout', 'string', { configurable: false, default: null, values: ['short', 'moderate', 'long', 'eternal'] }),
              attrSpec('flaky', 'bool', { configurable: false }),
              attrSpec('shard_count', 'int', { configurable: false, default: -1 }),
              attrSpec('local', 'bool'),
            ]
          : []),
        attrSpec('toolchains', 'label_list', { configurable: false }),
        ...this.attributes,
      ],
    });
    this.ruleClass = { ...rc, starlarkDefined: true };
  }
  call(thread: Thread, args: Value[], kwargs: Kwargs | null): Value {
    if (!this.ruleClass) throw new StarlarkError('Invalid rule class hasn\'t been exported by a bzl file');
    if (args.length > 0) throw new StarlarkError(`${this.ruleClass.name}: unexpected positional arguments`);
    this.declare(thread, this.ruleClass, kwargs);
    return None;
  }
  repr(): string {
    return `<rule ${this.name}>`;
  }
}

/** `rule(implementation, attrs = {...}, executable, test, ...)`. */
export function ruleBuiltin(declare: (thread: Thread, ruleClass: RuleClass, kwargs: Kwargs | null) => void): Builtin {
  return new Builtin('rule', (_t, args, kwargs) => {
    let attrs: Value | undefined;
    let test = false;
    let executable = false;
    if (args.length > 1) throw new StarlarkError(`rule: got ${args.length} positional arguments, want at most 1`);
    for (const [k, v] of kwargs ?? []) {
      if (k === 'attrs') attrs = v;
      else if (k === 'test') test = v === true;
      else if (k === 'executable') executable = v === true;
    }
    const specs: AttributeSpec[] = [];
    if (attrs instanceof StarDict) {
      for (const k of attrs.iterate()) {
        const d = attrs.get(k);
        if (typeof k !== 'string' || !(d instanceof AttrDescriptor)) throw new StarlarkError(`rule: attrs: expected Attribute for ${repr(k)}`);
        const name = k;
        specs.push(
          attrSpec(name, d.attrType, {
            mandatory: d.mandatory,
            ...(d.defaultValue !== undefined ? { default: d.defaultValue } : {}),
            ...(d.values ? { values: d.values } : {}),
          }),
        );
      }
    } else if (attrs !== undefined && attrs !== None) throw new StarlarkError(`rule: for parameter attrs: got ${typeof attrs === 'object' ? attrs.type : typeof attrs}, want dict`);
    return new StarlarkRuleFunction(specs, { test, executable }, declare);
  });
}

/** `provider(doc, fields)`: a callable whose instances are structs. */
class Provider extends StarCallable {
  constructor(private exportedName = 'provider') {
    super();
  }
  get name(): string {
    return this.exportedName;
  }
  get type(): string {
    return 'Provider';
  }
  export(name: string): void {
    if (this.exportedName === 'provider') this.exportedName = name;
  }
  call(_t: Thread, args: Value[], kwargs: Kwargs | null): Value {
    if (args.length > 0) throw new StarlarkError(`${this.exportedName}: unexpected positional arguments`);
    return new StarStruct(kwargs ?? []);
  }
  repr(): string {
    return `<provider ${this.exportedName}>`;
  }
}

export const providerBuiltin = new Builtin('provider', () => new Provider());

class Aspect extends StarObject {
  get type(): string {
    return 'Aspect';
  }
  repr(): string {
    return '<aspect>';
  }
}

export const aspectBuiltin = new Builtin('aspect', () => new Aspect());

/** A depset kept as data: its elements in the requested order (duplicates removed). */
export class Depset extends StarObject {
  constructor(readonly elems: readonly Value[]) {
    super();
  }
  get type(): string {
    return 'depset';
  }
  override truth(): boolean {
    return this.elems.length > 0;
  }
  override attr(name: string): Value | undefined {
    if (name === 'to_list') return new Builtin('to_list', () => new StarList([...this.elems]));
    return undefined;
  }
  override attrNames(): string[] {
    return ['to_list'];
  }
  repr(path: ReprPath): string {
    return `depset([${this.elems.map((e) => repr(e, path)).join(', ')}])`;
  }
}

export const depsetBuiltin = new Builtin('depset', (_t, args, kwargs) => {
  const [direct, , transitive] = unpackArgs('depset', args, kwargs, ['direct?', 'order?', 'transitive?']);
  const out: Value[] = [];
  const seen = new Set<Value>();
  const add = (v: Value) => {
    const key = typeof v === 'object' ? v : v;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(v);
    }
  };
  for (const t of transitive instanceof StarList || transitive instanceof StarTuple ? transitive.elems : []) {
    if (t instanceof Depset) t.elems.forEach(add);
  }
  if (direct instanceof StarList || direct instanceof StarTuple) direct.elems.forEach(add);
  return new Depset(out);
});

/** Names Bazel assigns on export: rules and providers learn the global name they are bound to. */
export function exportGlobals(globals: ReadonlyMap<string, Value>): void {
  for (const [name, v] of globals) {
    if (v instanceof StarlarkRuleFunction || v instanceof Provider) v.export(name);
  }
}
