/**
 * The attribute schema model: what each attribute of a rule accepts. Values stored on targets are
 * plain JSON-friendly data (labels as canonical strings) or a select of such data, so packages can be
 * cached on disk.
 */

import type { SelectorList } from '../select.js';
import type { StarlarkAspect } from '../starlark-aspect.js';
import type { StarlarkTransition } from '../starlark-transition.js';

export type AttrType =
  | 'label'
  | 'label_list'
  | 'string'
  | 'string_list'
  | 'int_list'
  | 'string_dict'
  | 'string_list_dict'
  | 'label_keyed_string_dict'
  | 'label_list_dict'
  | 'bool'
  | 'int'
  | 'output'
  | 'output_list'
  | 'license';

/** Bazel's names for the types, as its conversion errors print them. */
export const TYPE_NAMES: Readonly<Record<AttrType, string>> = {
  label: 'label',
  label_list: 'list(label)',
  string: 'string',
  string_list: 'list(string)',
  int_list: 'list(int)',
  string_dict: 'dict(string, string)',
  string_list_dict: 'dict(string, list(string))',
  label_keyed_string_dict: 'dict(label, string)',
  label_list_dict: 'dict(string, list(label))',
  bool: 'boolean',
  int: 'int',
  output: 'output',
  output_list: 'list(output)',
  license: 'license',
};

/** A value without select(): labels are canonical label strings; dicts are ordered key/value pairs. */
export type PlainAttrValue =
  | string
  | number
  | boolean
  | null
  | readonly string[]
  | readonly number[]
  | readonly (readonly [string, string])[]
  | readonly (readonly [string, readonly string[]])[];

/** An attribute's value on a target: plain, or a select() coerced to the attribute's type, resolved during analysis. */
export type AttrValue = PlainAttrValue | SelectorList<PlainAttrValue>;

export interface AttributeSpec {
  readonly name: string;
  readonly type: AttrType;
  readonly mandatory: boolean;
  /** False when `select()` is rejected (Bazel's nonconfigurable attributes). */
  readonly configurable: boolean;
  readonly defaultValue: PlainAttrValue;
  /** When set, the only values accepted (strings or ints). */
  readonly allowedValues?: readonly (string | number)[];
  /** What a Starlark rule's `attr.*` said beyond the schema; analysis checks dependencies against it. */
  readonly starlark?: StarlarkAttributeOptions;
}

/** `attr.label(allow_files = ..., executable = ..., cfg = ..., providers = ...)` and friends. */
export interface StarlarkAttributeOptions {
  readonly doc: string;
  /** true: any file; a list: files with one of these endings; undefined: no files (rules only). */
  readonly allowFiles?: true | readonly string[];
  /** `allow_single_file`: exactly one file, `ctx.file.<name>`. */
  readonly singleFile: boolean;
  /** The dependency must be executable; `ctx.executable.<name>`. */
  readonly executable: boolean;
  /** Configuration of the dependency. */
  readonly cfg: 'target' | 'exec';
  /** A Starlark transition given as `cfg` (`transition()`, `analysis_test_transition()`), which analysis applies. */
  readonly transition?: StarlarkTransition;
  /** Alternatives of provider sets the dependency must have (provider keys and names). */
  readonly providers: readonly (readonly { readonly key: string; readonly name: string }[])[];
  readonly allowEmpty: boolean;
  /** `aspects = [...]`: aspects analysis applies to the dependencies (and propagates along their `attr_aspects`). */
  readonly aspects?: readonly StarlarkAspect[];
}

/** The empty value of each type, Bazel's default when a rule declares none. */
function emptyValueOf(type: AttrType): PlainAttrValue {
  switch (type) {
    case 'label':
    case 'output':
      return null;
    case 'string':
      return '';
    case 'bool':
      return false;
    case 'int':
      return 0;
    case 'license':
      return ['none'];
    default:
      return [];
  }
}

export interface AttrOptions {
  readonly mandatory?: boolean;
  readonly configurable?: boolean;
  readonly default?: PlainAttrValue;
  readonly values?: readonly (string | number)[];
  readonly starlark?: StarlarkAttributeOptions;
}

/** Declares an attribute; configurable unless said otherwise, defaulting to the type's empty value. */
export function attr(name: string, type: AttrType, options: AttrOptions = {}): AttributeSpec {
  return {
    name,
    type,
    mandatory: options.mandatory ?? false,
    configurable: options.configurable ?? true,
    defaultValue: options.default !== undefined ? options.default : emptyValueOf(type),
    ...(options.values ? { allowedValues: options.values } : {}),
    ...(options.starlark ? { starlark: options.starlark } : {}),
  };
}

export function isLabelType(type: AttrType): boolean {
  return type === 'label' || type === 'label_list' || type === 'label_keyed_string_dict' || type === 'label_list_dict';
}
