import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Depset, type DepsetOrder } from '../../src/loading/depset.js';

const ORDERS: DepsetOrder[] = ['default', 'postorder', 'preorder', 'topological'];

/** A random DAG of depsets over small string elements, all of one order, built bottom-up. */
const dag = fc
  .record({
    order: fc.constantFrom(...ORDERS),
    nodes: fc.array(
      fc.record({ direct: fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), { maxLength: 4 }), children: fc.array(fc.nat(), { maxLength: 3 }) }),
      {
        minLength: 1,
        maxLength: 12,
      },
    ),
  })
  .map(({ order, nodes }) => {
    const built: Depset[] = [];
    const contents: Set<string>[] = [];
    for (const n of nodes) {
      const children = built.length === 0 ? [] : n.children.map((c) => c % built.length);
      built.push(
        Depset.of(
          order,
          n.direct,
          children.map((c) => built[c]!),
        ),
      );
      contents.push(new Set([...n.direct, ...children.flatMap((c) => [...contents[c]!])]));
    }
    return { set: built[built.length - 1]!, expected: contents[contents.length - 1]! };
  });

describe('depset', () => {
  it('to_list has each element of the DAG exactly once, in every order', () => {
    fc.assert(
      fc.property(dag, ({ set, expected }) => {
        const list = set.toList() as string[];
        expect(new Set(list).size).toBe(list.length);
        expect(new Set(list)).toEqual(expected);
      }),
    );
  });

  it('preorder puts direct elements before their children, postorder after', () => {
    const child = Depset.of('preorder', ['c'], []);
    expect(Depset.of('preorder', ['p'], [child]).toList()).toEqual(['p', 'c']);
    expect(Depset.of('postorder', ['p'], [Depset.of('postorder', ['c'], [])]).toList()).toEqual(['c', 'p']);
  });

  it('construction does not flatten: a chain of 10,000 depsets is built and listed', () => {
    let d = Depset.of('default', [], []);
    for (let i = 0; i < 10_000; i++) d = Depset.of('default', [`x${i % 100}`], [d]);
    expect(d.toList()).toHaveLength(100);
  });
});
