import { KilnError, type Position } from '../../core/index.js';
import { refines, type ConfigMatch } from './config-matching.js';

/** The condition that applies when no other condition of a selector matches. */
export const DEFAULT_CONDITION = '//conditions:default';

/**
 * One `select({...}, no_match_error = ...)`: condition keys as written, in source order, with
 * their values. The types are structural so that loading's `Selector` / `SelectorList` objects
 * (src/loading/select.ts) are accepted as they are.
 */
export interface Selector<V = unknown> {
  readonly entries: readonly (readonly [condition: string, value: V])[];
  readonly noMatchError: string;
}

/**
 * An attribute value that may hold selects: `a + select(...) + select(...)`. Each part is a
 * plain value or a selector; the resolved value concatenates the chosen parts in order.
 * Recognised by an array `parts` plus `type === 'select'` (loading's Starlark value) or
 * `kind === 'select'`.
 */
export interface SelectorList<V = unknown> {
  readonly parts: readonly (Selector<V> | V)[];
}

export function isSelectorList(value: unknown): value is SelectorList {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as { parts?: unknown; type?: unknown; kind?: unknown };
  return Array.isArray(v.parts) && (v.type === 'select' || v.kind === 'select');
}

export function isSelector(part: unknown): part is Selector {
  if (typeof part !== 'object' || part === null) return false;
  const p = part as { entries?: unknown; noMatchError?: unknown };
  return Array.isArray(p.entries) && typeof p.noMatchError === 'string';
}

/**
 * Loading's stored form of an attribute with selects (src/loading/rules/attribute.ts `SelectValue`):
 * `{ select: [{ conditions, noMatchError } | { plain }] }`, condition labels already canonical.
 */
export interface StoredSelectValue<V = unknown> {
  readonly select: readonly ({ readonly conditions: readonly (readonly [string, V])[]; readonly noMatchError: string } | { readonly plain: V })[];
}

export function isStoredSelectValue(value: unknown): value is StoredSelectValue {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Array.isArray((value as { select?: unknown }).select);
}

type Part<V> = { readonly selector: Selector<V> } | { readonly plain: V };

/** The parts of either select form, or undefined for a value without select. */
function partsOf<V>(value: unknown): Part<V>[] | undefined {
  if (isStoredSelectValue(value)) {
    return value.select.map((p) =>
      'plain' in p ? { plain: p.plain as V } : { selector: { entries: p.conditions as readonly (readonly [string, V])[], noMatchError: p.noMatchError } },
    );
  }
  if (isSelectorList(value)) return value.parts.map((p) => (isSelector(p) ? { selector: p as Selector<V> } : { plain: p as V }));
  return undefined;
}

/** Whether an attribute value holds a select in either form. */
export function hasSelect(value: unknown): boolean {
  return isStoredSelectValue(value) || isSelectorList(value);
}

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
  value: V | SelectorList<V> | StoredSelectValue<V>,
  site: SelectSite,
  matchCondition: (label: string) => ConfigMatch,
  concat: (a: V, b: V) => V = concatValues as (a: V, b: V) => V,
): V {
  const parts = partsOf<V>(value);
  if (parts === undefined) return value as V;
  if (!site.configurable) throw new SelectError(`${site.ruleLabel}: attribute "${site.attribute}" is not configurable`, site.pos);
  let result: V | undefined;
  let first = true;
  for (const part of parts) {
    const chosen = 'selector' in part ? chooseBranch(part.selector, site, matchCondition) : part.plain;
    result = first ? chosen : concat(result as V, chosen);
    first = false;
  }
  if (first) throw new Error(`empty select list in ${site.ruleLabel}`);
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
  const parts = partsOf(value);
  if (parts === undefined) return [];
  const out: string[] = [];
  for (const part of parts) {
    if (!('selector' in part)) continue;
    for (const [written] of part.selector.entries) {
      const condition = canonicalize(written);
      if (condition !== DEFAULT_CONDITION && !out.includes(condition)) out.push(condition);
    }
  }
  return out;
}
