import { KilnError } from '../../core/index.js';
import type { ConstraintValue, PlatformDeclaration } from '../config/platform.js';
import type { AnalysisTarget, TargetGraph } from './configured-target.js';
import { canonicalizeIn } from './target-paths.js';

/**
 * Reads `platform(constraint_values, parents, exec_properties)` targets from the loaded graph, for
 * `createConfigurations({ platforms })`. Each constraint value's setting comes from its
 * `constraint_value(constraint_setting = ...)` target.
 */
export function platformDeclarationsFrom(graph: TargetGraph): (label: string) => PlatformDeclaration | undefined {
  return (label) => {
    const target = graph.target(label);
    if (target?.kind !== 'rule' || target.ruleClass !== 'platform') return undefined;
    const labels = (name: string) => {
      const v = target.attrs.get(name);
      return (Array.isArray(v) ? (v as string[]) : []).map((raw) => canonicalizeIn(label, raw) ?? raw);
    };
    return {
      label,
      constraintValues: labels('constraint_values').map((cv) => {
        const value = constraintValueOf(graph, cv);
        if (!value) {
          throw new KilnError(
            `in constraint_values attribute of platform rule ${label}: '${cv}' does not have mandatory providers: 'ConstraintValueInfo'`,
            target.location,
          );
        }
        return value;
      }),
      parents: labels('parents'),
      execProperties: dictEntries(target.attrs.get('exec_properties')),
      pos: target.location,
    };
  };
}

/** A string_dict attribute's entries as loading stored them; none when unset. */
function dictEntries(value: unknown): (readonly [string, string])[] {
  if (!Array.isArray(value)) return [];
  return value.filter((e): e is [string, string] => Array.isArray(e) && typeof e[0] === 'string' && typeof e[1] === 'string');
}

/**
 * The constraint value behind a label (through aliases, as `@platforms//os:osx` is one), or undefined
 * when the label is not a constraint_value.
 */
export function constraintValueOf(graph: TargetGraph, label: string, depth = 0): ConstraintValue | undefined {
  const t: AnalysisTarget | undefined = graph.target(label);
  if (t?.kind === 'rule' && t.ruleClass === 'alias' && depth < 16) {
    const actual = t.attrs.get('actual');
    return typeof actual === 'string' ? constraintValueOf(graph, canonicalizeIn(label, actual) ?? actual, depth + 1) : undefined;
  }
  if (t?.kind !== 'rule' || t.ruleClass !== 'constraint_value') return undefined;
  const setting = t.attrs.get('constraint_setting');
  if (typeof setting !== 'string') return undefined;
  return { label, setting: canonicalizeIn(label, setting) ?? setting };
}
