import { KilnError } from '../../core/index.js';
import type { OptionValue } from '../../core/options/index.js';
import { convertBuildSettingText, userFlagValue, type BuildSettingDefinition, type BuildSettingValue } from '../options/user-defined-flag.js';
import type { BuildConfiguration } from './build-configuration.js';
import { canonicalizeIn } from '../configured/target-paths.js';
import type { ConfigSetting } from './config-setting.js';

/** A config_setting evaluated in one configuration: the provider select() consumes. */
export interface ConfigMatch {
  readonly label: string;
  readonly matches: boolean;
  readonly settingKeys: ReadonlySet<string>;
}

/** Finds the build setting behind a flag_values key (loading supplies it). */
export type BuildSettingLookup = (label: string) => BuildSettingDefinition | undefined;

/**
 * Whether every entry of the setting matches the configuration (spec, config_setting 3-6):
 * unset options match by their default; list options use {@link listMatches}; defines are
 * matched per name against the last `--define` of that name; flag_values against the command
 * line (or rc file) value else the build setting's default; constraint_values must all be on
 * the configuration's target platform (extra platform constraints are ignored).
 */
export function matchConfigSetting(setting: ConfigSetting, config: BuildConfiguration, buildSettings?: BuildSettingLookup): ConfigMatch {
  return { label: setting.label, matches: matches(setting, config, buildSettings), settingKeys: setting.settingKeys };
}

function matches(setting: ConfigSetting, config: BuildConfiguration, buildSettings: BuildSettingLookup | undefined): boolean {
  for (const expected of setting.options) {
    if (!optionMatches(actualValue(config, expected.name), expected.value)) return false;
  }
  if (setting.defines.size > 0) {
    const defines = config.options.defines();
    for (const [name, value] of setting.defines) if (defines.get(name) !== value) return false;
  }
  for (const [label, text] of setting.flagValues) {
    const def = buildSettings?.(label);
    if (!def) {
      throw new KilnError(`in flag_values attribute of config_setting rule ${setting.label}: '${label}' is not a build setting`, setting.pos);
    }
    let expected: BuildSettingValue;
    try {
      // A label_flag's expected value is a label written in the config_setting's package.
      expected = def.type === 'label' ? (canonicalizeIn(setting.label, text) ?? convertBuildSettingText(def, text)) : convertBuildSettingText(def, text);
    } catch (e) {
      throw new KilnError(
        `in flag_values attribute of config_setting rule ${setting.label}: error while parsing user-defined configuration values: ${(e as Error).message}`,
        setting.pos,
        { cause: e },
      );
    }
    if (!optionMatches(userFlagValue(def, config.options.userFlags.get(label)), expected)) return false;
  }
  for (const cv of setting.constraintValues) if (!config.platform.has(cv)) return false;
  return true;
}

/** cpu and host_cpu default to the detected host CPU, which the configuration has computed. */
function actualValue(config: BuildConfiguration, name: string): OptionValue {
  if (name === 'cpu') return config.cpu;
  if (name === 'host_cpu') return config.hostCpu;
  return config.options.get(name);
}

function optionMatches(actual: OptionValue | BuildSettingValue, expected: OptionValue | BuildSettingValue): boolean {
  if (Array.isArray(actual) && Array.isArray(expected)) return listMatches(actual as readonly string[], expected as readonly string[]);
  return actual === expected;
}

/**
 * List options (spec, config_setting 3): a single expected item matches if it is anywhere in the
 * actual list; several expected items (a comma-joined entry of a splitting option such as
 * ios_multi_cpus) match when all are present, in any order and count. An empty expectation
 * matches only an empty list.
 */
export function listMatches(actual: readonly string[], expected: readonly string[]): boolean {
  if (expected.length === 0 || actual.length === 0) return expected.length === 0 && actual.length === 0;
  const present = new Set(actual);
  return expected.every((item) => present.has(item));
}

/**
 * Specialization (spec, config_setting 7): `a` refines `b` when a's settings include all of b's
 * (flags with their values, defines, user-defined flags, constraint values) and a has more.
 */
export function refines(a: ConfigMatch, b: ConfigMatch): boolean {
  if (a.settingKeys.size <= b.settingKeys.size) return false;
  for (const key of b.settingKeys) if (!a.settingKeys.has(key)) return false;
  return true;
}
