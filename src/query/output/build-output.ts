import { formatLocation } from './location-output.js';
import {
  NATIVE_RULE_CLASSES,
  BUILD_SETTING_RULE_CLASSES,
  Selector,
  SelectorList,
  type AttrValue,
  type PlainAttrValue,
  type RuleTarget,
} from '../../loading/index.js';
import type { OutputFormatter } from './formatter.js';

function quote(s: string): string {
  return JSON.stringify(s);
}

function plain(v: PlainAttrValue, dict = false): string {
  if (v === null) return 'None';
  if (typeof v === 'string') return quote(v);
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') return String(v);
  const arr = v as readonly unknown[];
  if (dict || (arr.length > 0 && Array.isArray(arr[0]))) {
    return `{${(arr as [string, PlainAttrValue][]).map(([k, x]) => `${quote(k)}: ${plain(x)}`).join(', ')}}`;
  }
  return `[${(arr as string[]).map(quote).join(', ')}]`;
}

function value(v: AttrValue, dict: boolean): string {
  if (!(v instanceof SelectorList)) return plain(v, dict);
  return v.parts
    .map((p) => (p instanceof Selector ? `select({${p.entries.map(([k, x]) => `${quote(k)}: ${plain(x, dict)}`).join(', ')}})` : plain(p, dict)))
    .join(' + ');
}

/**
 * `--output=build`: each rule as BUILD text with the attributes given explicitly, labels in
 * canonical form, preceded by a comment with its location (as Bazel 2.1.0's BuildOutputFormatter).
 */
export const buildOutput: OutputFormatter = {
  ordering: 'targets',
  format: (targets, env) => {
    let out = '';
    const printed = new Set<RuleTarget>();
    for (const t of targets) {
      // As Bazel 2.1.0: a generated file prints its generating rule; source files and package groups print nothing.
      const r = t.target.kind === 'generated' ? t.pkg.targets.get(t.target.generatingRule) : t.target;
      if (r?.kind !== 'rule' || printed.has(r)) continue;
      printed.add(r);
      out += `# ${formatLocation(r.location, (f) => env.absolutePath(f))}\n${r.ruleClass}(\n`;
      const schema = NATIVE_RULE_CLASSES.get(r.ruleClass) ?? BUILD_SETTING_RULE_CLASSES.get(r.ruleClass);
      // Schema order when the rule class is native (name first), else call order.
      const names = schema ? [...schema.attributes.keys()].filter((n) => r.attrs.has(n)) : [...r.attrs.keys()];
      if (names[0] !== 'name') names.splice(names.indexOf('name'), 1), names.unshift('name');
      for (const n of names) {
        const type = schema?.attributes.get(n)?.type;
        out += `  ${n} = ${value(r.attrs.get(n)!, type?.includes('dict') === true)},\n`;
        if (n === 'name' && r.generator) {
          out += `  generator_name = ${quote(r.generator.name)},\n  generator_function = ${quote(r.generator.function)},\n  generator_location = ${quote(r.generator.location)},\n`;
        }
      }
      out += ')\n\n';
    }
    return out;
  },
};
