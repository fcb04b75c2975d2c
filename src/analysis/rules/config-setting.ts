import { matchConfigSetting } from '../config/config-matching.js';
import { validateConfigSetting } from '../config/config-setting.js';
import type { ConstraintValue } from '../config/platform.js';
import type { RuleContext } from '../configured/rule-context.js';
import type { RuleResult } from './rule-result.js';

type Pairs = readonly (readonly [string, string])[];

/** Dictionary attributes arrive as ordered pairs (loading) or as plain objects (tests, hand-made targets). */
function pairs(value: unknown): Pairs {
  if (Array.isArray(value)) return value as Pairs;
  if (value instanceof Map) return [...value] as Pairs;
  if (typeof value === 'object' && value !== null) return Object.entries(value as Record<string, string>);
  return [];
}

/**
 * config_setting: validates the declaration and provides its match in this configuration
 * (values, define_values, flag_values, constraint_values; see config/config-matching.ts).
 * Its attributes are not configurable.
 */
export function analyzeConfigSetting(ctx: RuleContext): RuleResult {
  const flagValues = pairs(ctx.attr<unknown>('flag_values', [], false)).map(([k, v]) => {
    const label = ctx.canonicalize(k);
    if (label === undefined) throw ctx.error('flag_values', `invalid label '${k}'`);
    return [label, v] as const;
  });
  const constraintValues: ConstraintValue[] = ctx.deps('constraint_values', { configurable: false }).map((cv) => {
    const setting = cv.target.kind === 'rule' && cv.target.ruleClass === 'constraint_value' ? cv.target.attrs.get('constraint_setting') : undefined;
    if (typeof setting !== 'string') throw ctx.error('constraint_values', `'${cv.label}' does not have mandatory providers: 'ConstraintValueInfo'`);
    return { label: cv.label, setting: ctx.canonicalize(setting) ?? setting };
  });
  const setting = validateConfigSetting({
    label: ctx.target.label,
    values: pairs(ctx.attr<unknown>('values', [], false)),
    defineValues: pairs(ctx.attr<unknown>('define_values', [], false)),
    flagValues,
    constraintValues,
    pos: ctx.target.location,
  });
  return { files: [], runfiles: [], configMatch: matchConfigSetting(setting, ctx.config, ctx.buildSettings) };
}
