import { SelectorList } from '../select.js';
import type { AttrValue } from './attribute.js';

/**
 * The labels a label-list attribute would list more than once in some configuration, each named
 * once. Bazel checks every combination of select() branches; the same answer without enumerating
 * them: a label is duplicated when one value (a plain part or a branch) lists it twice, or when two
 * parts of a `a + select(...) + b` concatenation can each contribute it. Two branches of one
 * select() never meet, so a label in both is fine.
 */
export function duplicateLabels(value: AttrValue): readonly string[] {
  // Most values are one plain list: only a label it lists twice can be duplicated.
  if (!(value instanceof SelectorList)) {
    if (!Array.isArray(value) || value.length < 2) return [];
    const seen = new Set<string>();
    const twice = new Set<string>();
    for (const label of value as readonly string[]) {
      if (seen.has(label)) twice.add(label);
      else seen.add(label);
    }
    return [...twice];
  }
  const parts = value.alternatives();
  const duplicates = new Set<string>();
  const partsListing = new Map<string, number>();
  for (const alternatives of parts) {
    const inThisPart = new Set<string>();
    for (const list of alternatives) {
      if (!Array.isArray(list)) continue;
      const seen = new Set<string>();
      for (const label of list as readonly string[]) {
        if (seen.has(label)) duplicates.add(label);
        seen.add(label);
        inThisPart.add(label);
      }
    }
    for (const label of inThisPart) {
      const count = (partsListing.get(label) ?? 0) + 1;
      partsListing.set(label, count);
      if (count > 1) duplicates.add(label);
    }
  }
  return [...duplicates];
}
