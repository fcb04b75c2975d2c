import { isSelectValue, type AttrValue, type PlainAttrValue } from './attribute.js';

/**
 * The labels a label-list attribute lists more than once, each named once in the order its
 * second occurrence appears. As in Bazel, a select() is checked branch by branch (and each plain
 * part on its own): a label may appear in two branches, or beside a select, without error.
 */
export function duplicateLabels(value: AttrValue): readonly string[] {
  const lists: PlainAttrValue[] = isSelectValue(value)
    ? value.select.flatMap((part) => ('plain' in part ? [part.plain] : part.conditions.map(([, branch]) => branch)))
    : [value];
  const duplicates = new Set<string>();
  for (const list of lists) {
    if (!Array.isArray(list)) continue;
    const seen = new Set<string>();
    for (const label of list as readonly string[]) {
      if (seen.has(label)) duplicates.add(label);
      seen.add(label);
    }
  }
  return [...duplicates];
}
