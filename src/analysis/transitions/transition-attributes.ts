import { Label, StarLabel, type RuleClass } from '../../loading/index.js';
import { None, StarDict, StarList, StarStruct, type Value } from '../../starlark/index.js';

/** Reads one attribute of the rule in the configuration the transition starts from (select() resolved). */
export type AttributeReader = (name: string, fallback: unknown, configurable: boolean) => unknown;

/**
 * The `attr` a transition's implementation gets: the rule's attribute values (not its
 * dependencies' targets), labels as Label objects, as Bazel's StarlarkAttributeTransitionProvider
 * passes them. Frozen: a transition may read them only.
 */
export function transitionAttributes(ruleClass: RuleClass, read: AttributeReader, canonicalize: (raw: string) => string | undefined): StarStruct {
  const fields: [string, Value][] = [];
  for (const spec of ruleClass.attributes.values()) {
    const raw = read(spec.name, spec.defaultValue, spec.configurable);
    fields.push([spec.name, valueOf(spec.type, raw, canonicalize)]);
  }
  const struct = new StarStruct(fields);
  struct.freeze();
  return struct;
}

function valueOf(type: string, raw: unknown, canonicalize: (raw: string) => string | undefined): Value {
  const label = (text: string): Value => new StarLabel(Label.parse(canonicalize(text) ?? text));
  if (raw === null || raw === undefined) return type.endsWith('_list') || type === 'label_list' ? new StarList([]) : None;
  switch (type) {
    case 'label':
    case 'output':
      return typeof raw === 'string' ? label(raw) : None;
    case 'label_list':
    case 'output_list':
      return new StarList((raw as string[]).map(label));
    case 'label_keyed_string_dict':
      return dictOf((raw as [string, string][]).map(([k, v]) => [label(k), v]));
    case 'string_dict':
      return dictOf(raw as [string, string][]);
    case 'string_list_dict':
      return dictOf((raw as [string, string[]][]).map(([k, v]) => [k, new StarList([...v])]));
    default:
      return plain(raw);
  }
}

function plain(v: unknown): Value {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return new StarList(v.map(plain));
  return None;
}

function dictOf(entries: readonly (readonly [Value, Value])[]): StarDict {
  const d = new StarDict();
  for (const [k, v] of entries) d.set(k, v);
  return d;
}
