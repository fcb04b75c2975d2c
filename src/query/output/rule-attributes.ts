import {
  BUILD_SETTING_RULE_CLASSES,
  NATIVE_RULE_CLASSES,
  Selector,
  SelectorList,
  type AttrType,
  type AttrValue,
  type PlainAttrValue,
  type RuleTarget,
} from '../../loading/index.js';

/** One attribute of a rule as the structured outputs (xml, proto) print it. */
export interface RuleAttribute {
  readonly name: string;
  readonly type: AttrType;
  /** The value; a select() flattened (each list item once; a scalar select has no value: undefined). */
  readonly value: PlainAttrValue | undefined;
  readonly explicit: boolean;
}

/**
 * A rule's attributes in its class's order (`name` first, then Bazel's generator_* for macro-made
 * rules): the explicit ones, plus the class defaults when `withDefaults`. A rule class query does
 * not know (defined in Starlark) contributes only explicit attributes, typed by their values.
 */
export function ruleAttributes(rule: RuleTarget, withDefaults: boolean): RuleAttribute[] {
  const cls = NATIVE_RULE_CLASSES.get(rule.ruleClass) ?? BUILD_SETTING_RULE_CLASSES.get(rule.ruleClass);
  const deps = new Set(rule.dependencies);
  const out: RuleAttribute[] = [];
  const names = cls ? [...cls.attributes.keys()] : [...rule.attrs.keys()];
  for (const name of ['name', ...names.filter((n) => n !== 'name')]) {
    const given = rule.attrs.get(name);
    const spec = cls?.attributes.get(name);
    if (given === undefined && !(withDefaults && spec)) continue;
    const type = spec?.type ?? inferType(given!, deps);
    out.push({ name, type, value: given === undefined ? spec!.defaultValue : flatten(given), explicit: given !== undefined });
    if (name === 'name' && rule.generator) {
      out.push({ name: 'generator_name', type: 'string', value: rule.generator.name, explicit: true });
      out.push({ name: 'generator_function', type: 'string', value: rule.generator.function, explicit: true });
      out.push({ name: 'generator_location', type: 'string', value: rule.generator.location, explicit: true });
    }
  }
  return out;
}

function flatten(v: AttrValue): PlainAttrValue | undefined {
  if (!(v instanceof SelectorList)) return v;
  const values = v.values();
  if (!values.every((x) => Array.isArray(x))) return undefined;
  const seen = new Set<string>();
  const items: unknown[] = [];
  for (const list of values as unknown[][]) {
    for (const item of list) {
      const key = JSON.stringify(item);
      if (!seen.has(key)) seen.add(key), items.push(item);
    }
  }
  return items as PlainAttrValue;
}

function inferType(v: AttrValue, deps: ReadonlySet<string>): AttrType {
  const plain = v instanceof SelectorList ? (flatten(v) ?? null) : v;
  if (typeof plain === 'boolean') return 'bool';
  if (typeof plain === 'number') return 'int';
  if (typeof plain === 'string') return deps.has(plain) ? 'label' : 'string';
  if (Array.isArray(plain)) {
    const first = (plain as unknown[])[0];
    if (Array.isArray(first)) return Array.isArray(first[1]) ? 'string_list_dict' : 'string_dict';
    return (plain as string[]).some((x) => deps.has(x)) ? 'label_list' : 'string_list';
  }
  return 'string';
}

/**
 * The labels a rule reads, as build.proto's rule_input and xml's rule-input list them: its
 * dependencies (select keys included) without what only `visibility` names, sorted.
 */
export function ruleInputs(rule: RuleTarget): string[] {
  const visibility = rule.attrs.get('visibility');
  const onlyVisibility = new Set(Array.isArray(visibility) ? (visibility as string[]) : []);
  for (const [name, v] of rule.attrs) {
    if (name === 'visibility') continue;
    // A select's condition keys count as named too.
    const values = v instanceof SelectorList ? v.parts.flatMap((p) => (p instanceof Selector ? p.entries.flat() : [p])) : [v];
    for (const x of values)
      for (const s of typeof x === 'string' ? [x] : Array.isArray(x) ? (x as unknown[]).flat(2) : []) if (typeof s === 'string') onlyVisibility.delete(s);
  }
  return [...new Set(rule.dependencies)].filter((d) => !onlyVisibility.has(d)).sort();
}

/** A package_group spec as Bazel prints it: `//a` as `a`, `//a/...` as `a/...`; `//...` and other repositories as written. */
export function packageSpecText(spec: string): string {
  const negative = spec.startsWith('-');
  const body = negative ? spec.slice(1) : spec;
  const text = body.startsWith('//') && body !== '//...' ? body.slice(2) : body;
  return negative ? `-${text}` : text;
}
