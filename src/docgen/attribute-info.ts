import type { AttributeSpec, AttrType, PlainAttrValue } from '../loading/index.js';
import { AttributeType, type AttributeInfoInit, type ProviderNameGroupInit } from '../../proto/gen/stardoc_output/index.js';
import { repr } from '../starlark/index.js';
import type { LabelRenderer } from './label-renderer.js';
import { trimDocString } from './trim-doc-string.js';

const TYPES: Readonly<Record<AttrType, AttributeType>> = {
  label: AttributeType.LABEL,
  label_list: AttributeType.LABEL_LIST,
  string: AttributeType.STRING,
  string_list: AttributeType.STRING_LIST,
  int_list: AttributeType.INT_LIST,
  string_dict: AttributeType.STRING_DICT,
  string_list_dict: AttributeType.STRING_LIST_DICT,
  label_keyed_string_dict: AttributeType.LABEL_STRING_DICT,
  label_list_dict: AttributeType.LABEL_LIST_DICT,
  bool: AttributeType.BOOLEAN,
  int: AttributeType.INT,
  output: AttributeType.OUTPUT,
  output_list: AttributeType.OUTPUT_LIST,
  // Bazel has no type for the deprecated license attribute and documents it as a list of strings.
  license: AttributeType.STRING_LIST,
};

/** A provider as an attribute or rule names it: its display name and origin key. */
export type ProviderGroupNamer = (providers: readonly { readonly key: string; readonly name: string }[]) => ProviderNameGroupInit;

/** The implicit `name` attribute every rule documents first. */
export const RULE_NAME_ATTRIBUTE: AttributeInfoInit = { name: 'name', type: AttributeType.NAME, mandatory: true, docString: 'A unique name for this target.' };

/**
 * The attributes a user of the entity can set: those with a public name, declared in Starlark
 * unless `withNative` (a symbolic macro documents the native attributes it inherits, as Bazel does).
 */
export function documentableAttributes(
  attributes: Iterable<AttributeSpec>,
  renderer: LabelRenderer,
  providerGroup: ProviderGroupNamer,
  withNative = false,
): AttributeInfoInit[] {
  const out: AttributeInfoInit[] = [];
  for (const spec of attributes) {
    if ((!spec.starlark && !withNative) || !/^[A-Za-z]/.test(spec.name)) continue;
    out.push(attributeInfo(spec, renderer, providerGroup));
  }
  return out;
}

function attributeInfo(spec: AttributeSpec, renderer: LabelRenderer, providerGroup: ProviderGroupNamer): AttributeInfoInit {
  const info: AttributeInfoInit = { name: spec.name, type: TYPES[spec.type] };
  const doc = trimDocString(spec.starlark?.doc ?? '');
  if (doc !== '') info.docString = doc;
  if (spec.mandatory) info.mandatory = true;
  // Output attributes are never configurable in Bazel.
  if (!spec.configurable || spec.type === 'output' || spec.type === 'output_list') info.nonconfigurable = true;
  if (!spec.starlark) info.nativelyDefined = true;
  const groups = spec.starlark?.providers ?? [];
  if (groups.length > 0) info.providerNameGroup = groups.map(providerGroup);
  if (!spec.mandatory) info.defaultValue = defaultValueText(spec.type, spec.defaultValue, renderer);
  return info;
}

/** Bazel's `repr` of an attribute default, labels as shorthand strings (no `Label(...)`). */
function defaultValueText(type: AttrType, value: PlainAttrValue, renderer: LabelRenderer): string {
  if (value === null) return 'None';
  const label = (s: string) => repr(renderer.render(s));
  const list = (items: readonly string[]) => `[${items.join(', ')}]`;
  const dict = (pairs: readonly (readonly [string, string])[]) => `{${pairs.map(([k, v]) => `${k}: ${v}`).join(', ')}}`;
  switch (type) {
    case 'label':
      return label(value as string);
    case 'label_list':
      return list((value as readonly string[]).map(label));
    case 'label_keyed_string_dict':
      return dict((value as readonly (readonly [string, string])[]).map(([k, v]) => [label(k), repr(v)]));
    case 'label_list_dict':
      return dict((value as readonly (readonly [string, readonly string[]])[]).map(([k, v]) => [repr(k), list(v.map(label))]));
    case 'string_dict':
      return dict((value as readonly (readonly [string, string])[]).map(([k, v]) => [repr(k), repr(v)]));
    case 'string_list_dict':
      return dict((value as readonly (readonly [string, readonly string[]])[]).map(([k, v]) => [repr(k), list(v.map((s) => repr(s)))]));
    case 'string_list':
    case 'license':
    case 'output_list':
      return list((value as readonly string[]).map((s) => repr(s)));
    case 'int_list':
      return list((value as readonly number[]).map(String));
    case 'output':
      return label(value as string);
    case 'string':
      return repr(value as string);
    case 'bool':
      return value ? 'True' : 'False';
    case 'int':
      return String(value);
  }
}
