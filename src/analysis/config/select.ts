import { KilnError, type Position } from '../../core/index.js';
import { DEFAULT_CONDITION, Selector, SelectorList } from '../../loading/index.js';
import { refines, type ConfigMatch } from './config-matching.js';

/** The attribute being resolved, for messages. */
export interface SelectSite {
  readonly ruleLabel: string;
  readonly attribute: string;
  readonly configurable: boolean;
  /** The rule's position in its BUILD file. */
  readonly pos?: Position;
  /** Makes a condition key canonical (`:opt` → `//pkg:opt`); identity when absent. */
  readonly canonicalizeCondition?: (raw: string) => string;
}

export class SelectError extends KilnError {}

/**
 * Resolves an attribute value in one configuration. `matchCondition` gives the config_setting's
 * match in the configuration of the target being analysed. `concat` joins the parts' values
 * (lists, strings and dicts by default, as `+` does in BUILD files).
 */
export function resolveSelect<V>(
  value: V | SelectorList<V>,
  site: SelectSite,
  matchCondition: (label: string) => ConfigMatch,
  concat: (a: V, b: V) => V = concatValues as (a: V, b: V) => V,
): V {
  if (!(value instanceof SelectorList)) return value;
  if (!site.configurable) throw new SelectError(`${site.ruleLabel}: attribute "${site.attribute}" is not configurable`, site.pos);
  const parts = value.parts as readonly (Selector<V> | V)[];
  if (parts.length === 0) throw new Error(`empty select list in ${site.ruleLabel}`);
  let result: V | undefined;
  for (const [i, part] of parts.entries()) {
    const chosen = part instanceof Selector ? chooseBranch(part, site, matchCondition) : part;
    result = i === 0 ? chosen : concat(result as V, chosen);
  }
  return result as V;
}

function chooseBranch<V>(selector: Selector<V>, site: SelectSite, matchCondition: (label: string) => ConfigMatch): V {
  // Bazel keeps every match that no other match refines; one must remain.
  let winners: { condition: string; match: ConfigMatch; value: V }[] = [];
  const checked: string[] = [];
  let defaultValue: { value: V } | undefined;
  const canonical = site.canonicalizeCondition ?? ((raw: string) => raw);
  for (const [written, value] of selector.entries) {
    const condition = canonical(written);
    if (condition === DEFAULT_CONDITION) {
      defaultValue = { value };
      continue;
    }
    checked.push(condition);
    const match = matchCondition(condition);
    if (!match.matches) continue;
    if (winners.some((w) => refines(w.match, match))) continue;
    winners = winners.filter((w) => !refines(match, w.match));
    winners.push({ condition, match, value });
  }
  if (winners.length > 1) {
    throw new SelectError(
      `Illegal ambiguous match on configurable attribute "${site.attribute}" in ${site.ruleLabel}:\n` +
        `${winners.map((w) => w.condition).join('\n')}\n` +
        'Multiple matches are not allowed unless one is unambiguously more specialized.',
      site.pos,
    );
  }
  if (winners.length === 1) return winners[0]!.value;
  if (defaultValue) return defaultValue.value;
  if (selector.noMatchError !== '') {
    throw new SelectError(`Configurable attribute "${site.attribute}" doesn't match this configuration: ${selector.noMatchError}`, site.pos);
  }
  throw new SelectError(
    `Configurable attribute "${site.attribute}" doesn't match this configuration (would a default condition help?).\n` +
      `Conditions checked:\n ${checked.join('\n ')}`,
    site.pos,
  );
}

/** `+` of BUILD files on resolved parts: lists and strings concatenate, dicts merge. */
export function concatValues(a: unknown, b: unknown): unknown {
  if (Array.isArray(a) && Array.isArray(b)) return [...a, ...b];
  if (typeof a === 'string' && typeof b === 'string') return a + b;
  if (a instanceof Map && b instanceof Map) return new Map([...a, ...b]);
  if (isPlainObject(a) && isPlainObject(b)) return { ...a, ...b };
  throw new KilnError(`cannot concatenate ${describe(a)} and ${describe(b)} in a select expression`);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;
}

function describe(v: unknown): string {
  if (Array.isArray(v)) return 'list';
  if (v instanceof Map || isPlainObject(v)) return 'dict';
  return typeof v;
}

/** Every condition label a value mentions, canonical (the config_settings analysis must evaluate first). */
export function conditionLabels(value: unknown, canonicalize: (raw: string) => string = (raw) => raw): string[] {
  if (!(value instanceof SelectorList)) return [];
  const out: string[] = [];
  for (const part of value.parts) {
    if (!(part instanceof Selector)) continue;
    for (const [written] of part.entries) {
      const condition = canonicalize(written);
      if (condition !== DEFAULT_CONDITION && !out.includes(condition)) out.push(condition);
    }
  }
  return out;
}
