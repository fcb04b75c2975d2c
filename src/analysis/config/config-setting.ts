import { KilnError, type Position } from '../../core/index.js';
import { convertOccurrence, type OptionDefinition, OptionValueError, type OptionRegistry, type OptionValue } from '../../core/options/index.js';
import { BUILD_OPTIONS } from '../options/build-option-registry.js';
import type { ConstraintValue } from './platform.js';

/**
 * A `config_setting` as loading hands it over. Dictionaries are entry lists in source order so
 * that a key given twice (`dict([("cpu", "a"), ("cpu", "b")])`, or a loader that keeps duplicate
 * keys) can keep its last instance, as the spec requires.
 */
export interface ConfigSettingDeclaration {
  readonly label: string;
  readonly values?: readonly (readonly [string, string])[];
  readonly defineValues?: readonly (readonly [string, string])[];
  /** Keys are canonical labels of user-defined flags. */
  readonly flagValues?: readonly (readonly [string, string])[];
  readonly constraintValues?: readonly ConstraintValue[];
  /** Where the rule is declared (for `ERROR: BUILD:line:col:`). */
  readonly pos?: Position;
}

/** One expected native option value, already converted by the option's own converter. */
export interface ExpectedOption {
  readonly name: string;
  readonly text: string;
  readonly value: OptionValue;
  readonly definition: OptionDefinition;
}

/** A validated config_setting: what matching needs, with duplicate keys resolved. */
export interface ConfigSetting {
  readonly label: string;
  readonly options: readonly ExpectedOption[];
  /** define name → value; from define_values and from `values = {"define": "a=1"}`. */
  readonly defines: ReadonlyMap<string, string>;
  readonly flagValues: ReadonlyMap<string, string>;
  readonly constraintValues: readonly ConstraintValue[];
  /**
   * Every setting as one string (`values:cpu=k8`, `values:define=a=1`, `flag://f=x`,
   * `constraint:@platforms//os:linux`): specialization compares these sets.
   */
  readonly settingKeys: ReadonlySet<string>;
  readonly pos?: Position;
}

/** An invalid config_setting declaration, named the way Bazel names rule errors. */
export class ConfigSettingError extends KilnError {}

function ruleError(decl: ConfigSettingDeclaration, attribute: string | undefined, message: string): ConfigSettingError {
  const where = attribute ? `in ${attribute} attribute of config_setting rule ${decl.label}` : `in config_setting rule ${decl.label}`;
  return new ConfigSettingError(`${where}: ${message}`, decl.pos);
}

/** Later entries replace earlier ones of the same key, keeping the first position (Starlark dict semantics). */
function lastWins(entries: readonly (readonly [string, string])[] | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of entries ?? []) out.set(k, v);
  return out;
}

/**
 * Checks a declaration and converts its expected values. Rules (spec, config_setting):
 *  - at least one of values, define_values, flag_values and constraint_values must be non-empty.
 *    The spec leaves flag_values out of this requirement; Bazel (2.1.0, 4.2.3, present-day
 *    ConfigSetting.valuesAreSet) counts it, and Bazel decides;
 *  - keys of values are full option names; values are read by the option's converter;
 *  - define_values and `values = {"define": ...}` merge, but one define name may not be given both ways.
 */
export function validateConfigSetting(decl: ConfigSettingDeclaration, registry: OptionRegistry = BUILD_OPTIONS): ConfigSetting {
  const values = lastWins(decl.values);
  const defineValues = lastWins(decl.defineValues);
  const flagValues = lastWins(decl.flagValues);
  const constraintValues = decl.constraintValues ?? [];
  if (values.size === 0 && defineValues.size === 0 && flagValues.size === 0 && constraintValues.length === 0) {
    // Bazel's words: define_values counts as values there (it is merged into the native settings).
    throw ruleError(decl, undefined, 'Either values, flag_values or constraint_values must be specified and non-empty');
  }

  const options: ExpectedOption[] = [];
  const defines = new Map<string, string>();
  const settingKeys = new Set<string>();
  for (const [name, text] of values) {
    const definition = registry.get(name);
    if (!definition || definition.executionOnly) {
      const hint = name.startsWith('-') ? ` (keys are option names without dashes: '${name.replace(/^-+/, '')}')` : '';
      throw ruleError(decl, 'values', `error while parsing configuration settings: unknown option: '${name}'${hint}`);
    }
    let value: OptionValue;
    try {
      value = convertOccurrence(definition, text);
    } catch (e) {
      if (e instanceof OptionValueError) throw ruleError(decl, 'values', `error while parsing configuration settings: ${e.message}`);
      throw e;
    }
    if (name === 'define') {
      const eq = text.indexOf('=');
      defines.set(text.slice(0, eq), text.slice(eq + 1));
    } else {
      options.push({ name, text, value, definition });
    }
    settingKeys.add(`values:${name}=${text}`);
  }
  for (const [name, value] of defineValues) {
    if (defines.has(name)) {
      throw ruleError(decl, 'define_values', `define '${name}' is set both in values and in define_values`);
    }
    defines.set(name, value);
    settingKeys.add(`values:define=${name}=${value}`);
  }
  for (const [label, value] of flagValues) settingKeys.add(`flag:${label}=${value}`);

  const bySetting = new Map<string, string>();
  for (const cv of constraintValues) {
    const other = bySetting.get(cv.setting);
    if (other !== undefined && other !== cv.label) {
      throw ruleError(decl, 'constraint_values', `Duplicate constraint values detected: constraint_setting ${cv.setting} has [${other}, ${cv.label}]`);
    }
    bySetting.set(cv.setting, cv.label);
    settingKeys.add(`constraint:${cv.label}`);
  }

  return {
    label: decl.label,
    options,
    defines,
    flagValues,
    constraintValues,
    settingKeys,
    ...(decl.pos ? { pos: decl.pos } : {}),
  };
}
