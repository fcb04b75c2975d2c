import { Label, StarLabel } from '../../loading/index.js';
import { None, StarList, StarTuple, type Value } from '../../starlark/index.js';
import type { BuildOptions } from '../options/build-options.js';
import { convertOccurrence, type OptionDefinition, OptionValueError, type OptionValue } from '../../core/options/index.js';
import { TransitionValidationError } from './transition-error.js';

/** How transitions name a native option: `//command_line_option:cpu`. */
export const COMMAND_LINE_OPTION_PREFIX = '//command_line_option:';

/** Options whose values Bazel keeps as Labels, so a transition reads Label objects. */
const LABEL_LIST_OPTIONS = new Set(['platforms']);
const LABEL_OPTIONS = new Set(['host_platform']);

/**
 * The definition of a native option a transition may read or write: every build option (the ones
 * that make up a configuration); execution-only flags (`--jobs`) are no build options in Bazel.
 */
export function transitionableOption(options: BuildOptions, name: string): OptionDefinition | undefined {
  const def = options.registry.get(name);
  return def && !def.executionOnly ? def : undefined;
}

/** A native option's value as a transition's `settings` dict holds it. `cpu` and `host_cpu` unset are the host's cpu, as in Bazel. */
export function nativeOptionStarlarkValue(options: BuildOptions, name: string, hostCpu: string): Value {
  const value = options.get(name);
  if ((name === 'cpu' || name === 'host_cpu') && value === '') return hostCpu;
  if (LABEL_LIST_OPTIONS.has(name)) return new StarList((value as readonly string[]).map(labelValue));
  if (LABEL_OPTIONS.has(name)) return value === '' ? None : labelValue(value as string);
  return Array.isArray(value) ? new StarList([...(value as readonly string[])]) : (value as string | number | boolean);
}

function labelValue(text: string): Value {
  try {
    return new StarLabel(Label.parse(text));
  } catch {
    return text;
  }
}

/**
 * A transition's output for a native option converted to the option's value, as Bazel's
 * FunctionTransitionUtil.applyTransition converts it (a string through the option's converter, a
 * list of a non-repeatable option joined with commas and converted, None the default), in its words.
 */
export function nativeOptionFromStarlark(def: OptionDefinition, value: Value): OptionValue {
  const name = def.name;
  const text = (v: Value): string => (v instanceof StarLabel ? v.label.toString() : typeof v === 'string' ? v : String(v));
  try {
    if (value === None) {
      if (def.type === 'list') {
        throw new TransitionValidationError(
          `'None' value not allowed for List-type option '${name}'. Please use '[]' instead if trying to set option to empty value.`,
        );
      }
      return def.default;
    }
    switch (def.type) {
      case 'list': {
        if (value instanceof StarList || value instanceof StarTuple) {
          if (value.elems.length === 0) return def.default;
          if (def.allowMultiple) return value.elems.map(text);
          return canonicalItems(name, convertOccurrence(def, value.elems.map(text).join(',')) as readonly string[]);
        }
        if (typeof value === 'string' || value instanceof StarLabel) return canonicalItems(name, convertOccurrence(def, text(value)) as readonly string[]);
        break;
      }
      case 'bool':
        if (typeof value === 'boolean') return value;
        if (typeof value === 'string') return convertOccurrence(def, value);
        break;
      case 'int':
      case 'duration':
        if (typeof value === 'number') return value;
        if (typeof value === 'string') return convertOccurrence(def, value);
        break;
      case 'string':
        if (typeof value === 'string') return convertOccurrence(def, value);
        if (value instanceof StarLabel && LABEL_OPTIONS.has(name)) return value.label.toString();
        break;
    }
  } catch (e) {
    if (e instanceof OptionValueError) throw new TransitionValidationError(`OptionsParsingError for option '${name}': ${e.message}`);
    throw e;
  }
  throw new TransitionValidationError(`Invalid value type for option '${name}'`);
}

/** Labels of a label-list option canonical, so `//p:x` and `//p:x` written differently are one configuration. */
function canonicalItems(name: string, items: readonly string[]): readonly string[] {
  if (!LABEL_LIST_OPTIONS.has(name)) return items;
  return items.map((item) => {
    try {
      return Label.parse(item).toString();
    } catch {
      throw new TransitionValidationError(`OptionsParsingError for option '${name}': invalid label '${item}'`);
    }
  });
}
