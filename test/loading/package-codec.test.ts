import { describe, expect, it } from 'vitest';
import { ByteFormatError } from '../../src/core/index.js';
import { type Package, Selector, SelectorList } from '../../src/loading/index.js';
import { decodePackage, encodePackage } from '../../src/loading/package-codec.js';
import type { Target } from '../../src/loading/target.js';

const at = (line: number, col = 1) => ({ file: 'p/BUILD', line, col });

/** A package with every target kind and value shape the cache must keep exactly. */
function samplePackage(): Package {
  const targets: Target[] = [
    {
      kind: 'rule',
      name: 'r',
      ruleClass: 'genrule',
      location: at(3),
      attrs: new Map<string, unknown>([
        ['name', 'r'],
        ['outs', ['//p:r.out']],
        ['n', -42],
        ['f', 2.5],
        ['big', 2 ** 40],
        ['on', true],
        ['off', false],
        ['none', null],
        ['ints', [1, -2, 3]],
        [
          'dict',
          [
            ['k', 'v'],
            ['ü', '☃'],
          ],
        ],
        ['list_dict', [['k', ['//p:a', '//p:b']]]],
        [
          'cmd',
          new SelectorList([
            new Selector(
              [
                ['//p:c', 'x'],
                ['//conditions:default', 'y'],
              ],
              'no',
            ),
            'z',
          ]),
        ],
      ]) as Map<string, never>,
      outputs: ['r.out'],
      dependencies: ['//p:a', '//p:b', '//p:c'],
      generator: { name: 'm', function: 'macro', location: 'p/BUILD:3' },
    },
    {
      kind: 'rule',
      name: 's',
      ruleClass: 'my_rule',
      location: { file: 'other/defs.bzl', line: 7, col: 5 },
      attrs: new Map([['name', 's']]),
      outputs: [],
      dependencies: [],
      starlarkDefined: true,
      ruleDefinition: '//other:defs.bzl%my_rule',
    },
    { kind: 'generated', name: 'r.out', location: at(3), generatingRule: 'r' },
    { kind: 'source', name: 'a', location: at(3) },
    { kind: 'source', name: 'e.txt', location: at(9), visibility: ['//visibility:public'] },
    { kind: 'package_group', name: 'pg', location: at(10), packages: ['//p/...'], includes: [':pg2'] },
  ];
  return {
    repo: 'ext',
    pkg: 'p',
    buildFile: 'p/BUILD',
    targets: new Map(targets.map((t) => [t.name, t])),
    errors: [{ message: 'boom' }, { message: 'at a place', pos: { file: 'lib/m.bzl', line: 2, col: 4 } }],
    defaults: { visibility: ['//visibility:public'], testonly: true, deprecation: 'old', features: ['-f'], licenses: null },
  };
}

describe('package cache records', () => {
  it('round-trip every target kind, value shape, error and default exactly', () => {
    const p = samplePackage();
    const again = decodePackage(encodePackage(p));
    expect({ ...again, targets: new Map(again.targets) }).toEqual(p);
    expect([...again.targets.keys()]).toEqual([...p.targets.keys()]);
    const r = again.targets.get('r');
    expect(r?.kind === 'rule' && [...r.attrs.keys()]).toEqual([...(p.targets.get('r') as { attrs: Map<string, unknown> }).attrs.keys()]);
    // A select() comes back as the one select type, its selectors too.
    expect(r?.kind === 'rule' && r.attrs.get('cmd')).toStrictEqual((p.targets.get('r') as { attrs: Map<string, unknown> }).attrs.get('cmd'));
  });

  it('decode each target once, when first asked for, and look targets up by name in large packages too', () => {
    const again = decodePackage(encodePackage(samplePackage()));
    expect(again.targets.get('r')).toBe(again.targets.get('r'));
    expect(again.targets.has('nope')).toBe(false);
    const many = samplePackage();
    const targets = new Map(many.targets);
    for (let i = 0; i < 100; i++) targets.set(`s${i}`, { kind: 'source', name: `s${i}`, location: at(20 + i) });
    const big = decodePackage(encodePackage({ ...many, targets }));
    expect(big.targets.size).toBe(106);
    expect(big.targets.get('s99')).toEqual({ kind: 'source', name: 's99', location: at(119) });
    expect(big.targets.has('pg') && !big.targets.has('s100')).toBe(true);
    expect([...big.targets.keys()]).toEqual([...targets.keys()]);
  });

  it('store each distinct string once', () => {
    const size = encodePackage(samplePackage()).length;
    const p = samplePackage();
    const r = p.targets.get('r') as { dependencies: string[] };
    for (let i = 0; i < 100; i++) r.dependencies.push('//p:a');
    // One byte per reference, and one more for the longer body's length in the index.
    expect(encodePackage(p).length - size).toBe(101);
  });

  it('reject a truncated or garbled record instead of decoding something else', () => {
    const bytes = encodePackage(samplePackage());
    expect(() => decodePackage(bytes.subarray(0, bytes.length - 1))).toThrow(ByteFormatError);
    expect(() => decodePackage(Buffer.concat([bytes, Buffer.from([0])]))).toThrow(ByteFormatError);
    expect(() => decodePackage(Buffer.from([5, 0, 0]))).toThrow(ByteFormatError);
  });
});
