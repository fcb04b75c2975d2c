import { describe, expect, it } from 'vitest';
import { Label, type Package, type Target } from '../../src/loading/index.js';
import { orderForOutput, type QueryTarget } from '../../src/query/index.js';

const pkg = { repo: '', pkg: 'a', buildFile: 'a/BUILD', targets: new Map(), errors: [], defaults: {} } as unknown as Package;
const at = { file: 'a/BUILD', line: 1, col: 1 };

function node(name: string, p = 'a'): QueryTarget {
  const target: Target = { kind: 'rule', name, ruleClass: 'filegroup', location: at, attrs: new Map(), outputs: [], dependencies: [] };
  return { label: Label.inPackage({ repo: '', pkg: p }, name), target, pkg };
}

/** Orders `names` with the given edges (name -> names) as `--order_output=full` does. */
function order(names: string[], edges: Record<string, string[]>): string[] {
  const targets = new Map(names.map((n) => [n, node(n)]));
  const successors = (t: QueryTarget) => (edges[t.label.name] ?? []).map((d) => targets.get(d)!);
  return orderForOutput([...targets.values()], successors).map((t) => t.label.name);
}

describe('orderForOutput', () => {
  // Bazel 2.1.0 printed `//a:*` of a package with fg -> [x.txt, g, y.txt, c], g.out -> g as:
  // g.out fg y.txt x.txt g c BUILD (reverse post-order of a depth-first search in label order).
  it('reproduces Bazel 2.1.0 order for a package', () => {
    expect(order(['BUILD', 'c', 'fg', 'g', 'g.out', 'x.txt', 'y.txt'], { fg: ['x.txt', 'g', 'y.txt', 'c'], 'g.out': ['g'] })).toEqual([
      'g.out',
      'fg',
      'y.txt',
      'x.txt',
      'g',
      'c',
      'BUILD',
    ]);
  });

  it('prints targets without edges greatest label first, packages by path', () => {
    const t = node('t', 'a/b');
    const top = node('top', '');
    expect(orderForOutput([top, node('g'), t], () => []).map((x) => x.label.toString())).toEqual(['//a/b:t', '//a:g', '//:top']);
  });

  // Bazel 2.1.0 printed //cyc:... (entry -> a -> b -> c -> a, c -> leaf.txt) as entry a b c leaf.txt:
  // a cycle comes out from where the search entered it.
  it('prints a cycle from where the search entered it', () => {
    expect(order(['a', 'b', 'c', 'entry', 'leaf.txt'], { entry: ['a'], a: ['b'], b: ['c'], c: ['a', 'leaf.txt'] })).toEqual([
      'entry',
      'a',
      'b',
      'c',
      'leaf.txt',
    ]);
    expect(order(['x', 'y'], { x: ['y'], y: ['x'] })).toEqual(['x', 'y']);
  });
});
