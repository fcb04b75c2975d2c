import { describe, expect, it } from 'vitest';
import { Label, type Package, type Target } from '../../src/loading/index.js';
import { orderForOutput, type QueryTarget } from '../../src/query/index.js';

const pkg = { repo: '', pkg: 'a', buildFile: 'a/BUILD', targets: new Map(), errors: [], defaults: {} } as unknown as Package;
const at = { file: 'a/BUILD', line: 1, col: 1 };

function rule(name: string, deps: string[] = []): QueryTarget {
  const target: Target = { kind: 'rule', name, ruleClass: 'filegroup', location: at, attrs: new Map(), outputs: [], dependencies: deps };
  return { label: new Label('', 'a', name), target, pkg };
}

function file(name: string): QueryTarget {
  return { label: new Label('', 'a', name), target: { kind: 'source', name, location: at }, pkg };
}

describe('orderForOutput', () => {
  // Bazel 2.1.0 printed `//a:*` of a package with fg -> [x.txt, g, y.txt, c], g.out -> g as:
  // g.out fg y.txt x.txt g c BUILD (dependents first, greatest ready label next).
  it('reproduces Bazel 2.1.0 order for a package', () => {
    const targets = [
      file('BUILD'),
      rule('c'),
      rule('fg', ['//a:x.txt', '//a:g', '//a:y.txt', '//a:c']),
      rule('g'),
      { label: new Label('', 'a', 'g.out'), target: { kind: 'generated', name: 'g.out', location: at, generatingRule: 'g' }, pkg } as QueryTarget,
      file('x.txt'),
      file('y.txt'),
    ];
    expect(orderForOutput(targets).map((t) => t.label.name)).toEqual(['g.out', 'fg', 'y.txt', 'x.txt', 'g', 'c', 'BUILD']);
  });

  it('orders packages by path (//a/b after //a) and survives cycles', () => {
    const t = { label: new Label('', 'a/b', 't'), target: rule('t').target, pkg } as QueryTarget;
    const top = { label: new Label('', '', 'top'), target: rule('top').target, pkg } as QueryTarget;
    expect(orderForOutput([top, rule('g'), t]).map((x) => x.label.toString())).toEqual(['//a/b:t', '//a:g', '//:top']);
    // Bazel 2.1.0 printed pl, gq, g, cv, cset, cs for pl -> cv <-> cset, gq -> g (a cycle is one unit).
    const order = orderForOutput([rule('cs'), rule('cset', ['//a:cv']), rule('cv', ['//a:cset']), rule('g'), rule('gq', ['//a:g']), rule('pl', ['//a:cv'])]);
    expect(order.map((x) => x.label.name)).toEqual(['pl', 'gq', 'g', 'cv', 'cset', 'cs']);
  });
});
