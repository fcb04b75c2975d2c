import { KilnError, UsageError } from '../../core/index.js';
import type { UserFlagSetting } from './build-options.js';
import { convertBool, OptionValueError } from '../../core/options/index.js';
import { canonicalFlagLabel } from './parse-build-options.js';

/** The kinds of Starlark build settings (`config.string`, `config.bool`, ...). */
export type BuildSettingType = 'string' | 'bool' | 'int' | 'string_list' | 'label';

export type BuildSettingValue = string | boolean | number | readonly string[];

/**
 * A build setting as loading reads it from a `string_flag`/`bool_flag`/`int_flag`/
 * `string_list_flag` (or any rule with `build_setting = config.<type>(flag = ...)`).
 */
export interface BuildSettingDefinition {
  /** Canonical label, as `canonicalFlagLabel` prints it. */
  readonly label: string;
  readonly type: BuildSettingType;
  readonly defaultValue: BuildSettingValue;
  /** False for `flag = False`: such a setting cannot be set on the command line. */
  readonly isFlag: boolean;
  /** string_flag's `values`: the only values allowed, when given. */
  readonly allowedValues?: readonly string[];
}

/**
 * Converts one text for a build setting of this type: `a,b` becomes two items of a
 * string_list, booleans read true/yes/1 and false/no/0 as Bazel's converter does.
 */
export function convertBuildSettingText(def: BuildSettingDefinition, text: string): BuildSettingValue {
  switch (def.type) {
    case 'string':
      if (def.allowedValues && !def.allowedValues.includes(text)) {
        throw new OptionValueError(`invalid value '${text}'. Allowed values are [${def.allowedValues.map((v) => JSON.stringify(v)).join(', ')}]`);
      }
      return text;
    case 'bool':
      return convertBool(text);
    case 'int':
      // Bazel's converter's words.
      if (!/^[+-]?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new OptionValueError(`'${text}' is not a int`);
      return Number(text);
    case 'string_list':
      return text === '' ? [] : text.split(',');
    case 'label': {
      const label = canonicalFlagLabel(text);
      if (label === undefined) throw new OptionValueError(`invalid label: ${text}`);
      return label;
    }
  }
}

/**
 * The value of a user-defined flag in a configuration: what the command line (or an rc file)
 * set, else the build setting's default. Malformed settings are command-line errors.
 */
export function userFlagValue(def: BuildSettingDefinition, setting: UserFlagSetting | undefined): BuildSettingValue {
  if (setting === undefined) return def.defaultValue;
  const written = `--${setting.negated ? 'no' : ''}${setting.label}${setting.value === undefined ? '' : `=${setting.value}`}`;
  // Bazel 2.1.0 names a Starlark flag without its dashes in these messages.
  const bare = `${setting.label}${setting.value === undefined ? '' : `=${setting.value}`}`;
  if (!def.isFlag) throw new UsageError(`Unrecognized option: ${bare}`);
  if (setting.negated) {
    // Bazel 4.2.3's words (2.1.0 knew no `no` prefix for Starlark flags).
    if (def.type !== 'bool') throw new UsageError(`${setting.label} :: Illegal use of 'no' prefix on non-boolean option: ${setting.label}`);
    return false;
  }
  if (setting.value === undefined) {
    if (def.type !== 'bool') throw new UsageError(`Expected value after ${written}`);
    return true;
  }
  try {
    return convertBuildSettingText(def, setting.value);
  } catch (e) {
    if (e instanceof OptionValueError) throw new UsageError(`While parsing option ${bare}: ${e.message}`, undefined, { cause: e });
    throw e;
  }
}

/** What checking the command line's user-defined flags needs from loading. */
export interface BuildSettingSource {
  /** undefined: no such target (with loading's message); null: a target that is no build setting. */
  buildSetting(label: string): BuildSettingDefinition | null | { readonly missing: string };
}

/**
 * Checks every `--//pkg:flag` of the command line against its build setting, with Bazel's
 * messages: a missing target, a target that is not a build setting, a setting that is not a flag,
 * a value of the wrong type. Returns the first problem: a UsageError (exit 2) or a KilnError (exit 1).
 */
export function userFlagProblem(userFlags: ReadonlyMap<string, UserFlagSetting>, source: BuildSettingSource): KilnError | undefined {
  for (const [label, setting] of userFlags) {
    const def = source.buildSetting(label);
    if (def === null) return new KilnError(`Unrecognized option: ${label}`);
    if ('missing' in def) return new KilnError(`Error loading option ${label}: ${def.missing}`);
    try {
      userFlagValue(def, setting);
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      // Bazel exits 2 for a misused `no` prefix, as for any malformed option, and 1 for the rest.
      return setting.negated && def.type !== 'bool' ? e : new KilnError(e.message);
    }
  }
  return undefined;
}
