import { Label, StarLabel } from '../../loading/index.js';
import { repr, StarList, StarTuple, typeName, type Value } from '../../starlark/index.js';
import type { BuildSettingDefinition, BuildSettingValue } from '../options/user-defined-flag.js';
import { TransitionValidationError } from './transition-error.js';

/** A build setting's value as a transition's `settings` dict holds it. */
export function buildSettingStarlarkValue(def: BuildSettingDefinition, value: BuildSettingValue): Value {
  if (Array.isArray(value)) return new StarList([...(value as readonly string[])]);
  if (def.type === 'label') return new StarLabel(Label.parse(value as string));
  return value as string | number | boolean;
}

const TYPE_NAMES: Readonly<Record<BuildSettingDefinition['type'], string>> = {
  string: 'string',
  bool: 'bool',
  int: 'int',
  string_list: 'list(string)',
  label: 'label',
};

/**
 * A transition's output for a build setting converted to the setting's type, as Bazel's
 * StarlarkTransition.validate converts it (the build setting type's `convert`), in its words.
 */
export function buildSettingFromStarlark(def: BuildSettingDefinition, value: Value, written: string): BuildSettingValue {
  const wrong = () =>
    new TransitionValidationError(`expected value of type '${TYPE_NAMES[def.type]}' for ${written}, but got ${repr(value)} (${typeName(value)})`);
  switch (def.type) {
    case 'string':
      if (typeof value !== 'string') throw wrong();
      if (def.allowedValues && !def.allowedValues.includes(value)) {
        throw new TransitionValidationError(
          `Error setting ${def.label}: invalid value '${value}'. Allowed values are ${repr(new StarList([...def.allowedValues]))}`,
        );
      }
      return value;
    case 'bool':
      // Bazel's BOOLEAN type takes 0 and 1 too.
      if (typeof value === 'boolean') return value;
      if (value === 0 || value === 1) return value === 1;
      throw wrong();
    case 'int':
      if (typeof value !== 'number') throw wrong();
      return value;
    case 'string_list':
      if (!(value instanceof StarList || value instanceof StarTuple) || !value.elems.every((e) => typeof e === 'string')) throw wrong();
      return value.elems as readonly string[];
    case 'label':
      if (value instanceof StarLabel) return value.label.toString();
      if (typeof value !== 'string') throw wrong();
      try {
        return Label.parse(value).toString();
      } catch {
        throw wrong();
      }
  }
}

export function sameBuildSettingValue(a: BuildSettingValue, b: BuildSettingValue): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => x === b[i]);
  return a === b;
}
