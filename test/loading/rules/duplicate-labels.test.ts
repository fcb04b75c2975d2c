import { describe, expect, it } from 'vitest';
import { duplicateLabels } from '../../../src/loading/rules/duplicate-labels.js';
import { Selector, SelectorList } from '../../../src/loading/select.js';

describe('duplicateLabels', () => {
  it('names each label a plain list repeats, once', () => {
    expect(duplicateLabels(['//p:a', '//p:b', '//p:a', '//p:c', '//p:a', '//p:b'])).toEqual(['//p:a', '//p:b']);
    expect(duplicateLabels(['//p:a', '//p:b'])).toEqual([]);
    expect(duplicateLabels([])).toEqual([]);
  });

  it('checks a select() branch by branch: one label in two branches is fine, twice in one is not', () => {
    const select = (...branches: string[][]) =>
      new Selector(
        branches.map((b, i) => [`//c:${i}`, b] as const),
        '',
      );
    const list = (...parts: (Selector<string[]> | string[])[]) => new SelectorList(parts);
    expect(duplicateLabels(list(select(['//p:a'], ['//p:a'])))).toEqual([]);
    expect(duplicateLabels(list(select(['//p:a', '//p:a'], ['//p:b'])))).toEqual(['//p:a']);
    // Bazel 2.1.0 (test/e2e/differential, //dupacross): a plain part and a branch that can meet.
    expect(duplicateLabels(list(['//p:a'], select(['//p:b'], ['//p:a'])))).toEqual(['//p:a']);
    expect(duplicateLabels(list(select(['//p:a'], []), select([], ['//p:a'])))).toEqual(['//p:a']);
  });
});
