import { describe, expect, it } from 'vitest';
import { matchConfigSetting } from '../../../src/analysis/config/config-matching.js';
import { validateConfigSetting, type ConfigSettingDeclaration } from '../../../src/analysis/config/config-setting.js';
import { conditionLabels, resolveSelect, SelectError, type SelectSite } from '../../../src/analysis/config/select.js';
import { DEFAULT_CONDITION, Selector, SelectorList } from '../../../src/loading/index.js';
import { ARM64, configs, LINUX, X86_64 } from './config-fixture.js';

// The settings of these tests, as in a BUILD file of package //c.
const SETTINGS: readonly ConfigSettingDeclaration[] = [
  { label: '//c:opt', values: [['compilation_mode', 'opt']] },
  { label: '//c:fast', values: [['compilation_mode', 'fastbuild']] },
  { label: '//c:k8', values: [['cpu', 'k8']] },
  {
    label: '//c:k8_opt',
    values: [
      ['cpu', 'k8'],
      ['compilation_mode', 'opt'],
    ],
  },
  { label: '//c:x86', constraintValues: [X86_64] },
  { label: '//c:x86_linux', constraintValues: [X86_64, LINUX] },
  { label: '//c:linux', constraintValues: [LINUX] },
  { label: '//c:arm', constraintValues: [ARM64] },
  { label: '//c:a1', defineValues: [['a', '1']] },
  {
    label: '//c:a1_b2',
    defineValues: [
      ['a', '1'],
      ['b', '2'],
    ],
  },
  {
    label: '//c:a1_values',
    values: [
      ['define', 'a=1'],
      ['compilation_mode', 'opt'],
    ],
  },
];

const site: SelectSite = { ruleLabel: '//pkg:x', attribute: 'cmd', configurable: true, pos: { file: '/ws/pkg/BUILD', line: 3, col: 1 } };

function selector<V>(entries: [string, V][], noMatchError = ''): Selector<V> {
  return new Selector(entries, noMatchError);
}
function select<V>(...parts: (Selector<V> | V)[]): SelectorList<V> {
  return new SelectorList(parts);
}

function resolveIn<V>(value: V | SelectorList<V>, args: string[], which: 'target' | 'exec' = 'target', at: SelectSite = site): V {
  const config = configs(args)[which];
  return resolveSelect(value, at, (label) => {
    const decl = SETTINGS.find((s) => s.label === label);
    if (!decl) throw new Error(`no setting ${label}`);
    return matchConfigSetting(validateConfigSetting(decl), config);
  });
}

describe('select()', () => {
  it('chooses the matching condition, else //conditions:default', () => {
    const v = select(
      selector([
        ['//c:opt', 'O'],
        [DEFAULT_CONDITION, 'D'],
      ]),
    );
    expect(resolveIn(v, ['-c', 'opt'])).toBe('O');
    expect(resolveIn(v, [])).toBe('D');
  });

  it('plain values pass through', () => {
    expect(resolveIn(['a'], [])).toEqual(['a']);
  });

  it('a more specialized setting wins (values)', () => {
    const v = select(
      selector([
        ['//c:k8', 'K'],
        ['//c:k8_opt', 'KO'],
      ]),
    );
    expect(resolveIn(v, ['-c', 'opt'])).toBe('KO');
    expect(resolveIn(v, [])).toBe('K');
    // Order of the entries does not matter.
    expect(
      resolveIn(
        select(
          selector([
            ['//c:k8_opt', 'KO'],
            ['//c:k8', 'K'],
          ]),
        ),
        ['-c', 'opt'],
      ),
    ).toBe('KO');
  });

  it('a more specialized setting wins (constraints: x86 plus Linux specializes x86)', () => {
    expect(
      resolveIn(
        select(
          selector([
            ['//c:x86', 'X'],
            ['//c:x86_linux', 'XL'],
          ]),
        ),
        [],
      ),
    ).toBe('XL');
  });

  it('a more specialized setting wins (defines, and define_values equal to values define)', () => {
    expect(
      resolveIn(
        select(
          selector([
            ['//c:a1', 'A'],
            ['//c:a1_b2', 'AB'],
          ]),
        ),
        ['--define=a=1', '--define=b=2'],
      ),
    ).toBe('AB');
    expect(
      resolveIn(
        select(
          selector([
            ['//c:a1', 'A'],
            ['//c:a1_values', 'AO'],
          ]),
        ),
        ['--define=a=1', '-c', 'opt'],
      ),
    ).toBe('AO');
  });

  it('specialization keeps only the best among three matches', () => {
    const v = select(
      selector([
        ['//c:k8', 'K'],
        ['//c:opt', 'O'],
        ['//c:k8_opt', 'KO'],
      ]),
    );
    expect(resolveIn(v, ['-c', 'opt'])).toBe('KO');
  });

  // Message observed from Bazel 2.1.0: select({":k8": ..., ":fast": ...}) with default flags.
  it('two matches where neither specializes the other are an error naming both', () => {
    const v = select(
      selector([
        ['//c:k8', 'K'],
        ['//c:fast', 'F'],
      ]),
    );
    let error: unknown;
    try {
      resolveIn(v, []);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SelectError);
    expect((error as SelectError).format()).toBe(
      '/ws/pkg/BUILD:3:1: Illegal ambiguous match on configurable attribute "cmd" in //pkg:x:\n//c:k8\n//c:fast\n' +
        'Multiple matches are not allowed unless one is unambiguously more specialized.',
    );
    // Two constraint settings, each with a constraint the other lacks.
    expect(() =>
      resolveIn(
        select(
          selector([
            ['//c:x86', 1],
            ['//c:linux', 2],
          ]),
        ),
        [],
      ),
    ).toThrow('Illegal ambiguous match');
  });

  // Messages observed from Bazel 2.1.0 (genrule cmd = select({":opt": "x"}), with and without no_match_error).
  it('no match and no default lists the conditions checked', () => {
    const v = select(
      selector([
        ['//c:opt', 'O'],
        ['//c:arm', 'A'],
      ]),
    );
    expect(() => resolveIn(v, [])).toThrow(
      'Configurable attribute "cmd" doesn\'t match this configuration (would a default condition help?).\nConditions checked:\n //c:opt\n //c:arm',
    );
  });

  it('no match with no_match_error gives that message', () => {
    const v = select(selector([['//c:opt', 'O']], 'custom message here'));
    expect(() => resolveIn(v, [])).toThrow('Configurable attribute "cmd" doesn\'t match this configuration: custom message here');
  });

  it('list + select() + select() concatenates per configuration', () => {
    const v = select<string[]>(
      ['base'],
      selector([
        ['//c:opt', ['o']],
        [DEFAULT_CONDITION, ['d']],
      ]),
      selector([
        ['//c:k8', ['k']],
        [DEFAULT_CONDITION, []],
      ]),
    );
    expect(resolveIn(v, ['-c', 'opt'])).toEqual(['base', 'o', 'k']);
    expect(resolveIn(v, ['--cpu=arm'])).toEqual(['base', 'd']);
  });

  it('string and dict selects concatenate', () => {
    const s = select<string>(
      'echo ',
      selector([
        ['//c:opt', 'O'],
        [DEFAULT_CONDITION, 'D'],
      ]),
      ' > $@',
    );
    expect(resolveIn(s, ['-c', 'opt'])).toBe('echo O > $@');
    const d = select<Record<string, string>>(
      { a: '1' },
      selector([
        ['//c:opt', { b: '2' }],
        [DEFAULT_CONDITION, {}],
      ]),
    );
    expect(resolveIn(d, ['-c', 'opt'])).toEqual({ a: '1', b: '2' });
  });

  it('the same select resolves differently in the target and exec configurations', () => {
    const v = select(
      selector([
        ['//c:opt', 'O'],
        [DEFAULT_CONDITION, 'D'],
      ]),
    );
    expect(resolveIn(v, [], 'target')).toBe('D');
    expect(resolveIn(v, [], 'exec')).toBe('O');
  });

  // Bazel 2.1.0 reports this at loading: `//b:sel_nc: attribute "outs" is not configurable`.
  it('a select on a nonconfigurable attribute is an error', () => {
    const v = select(selector([[DEFAULT_CONDITION, ['x']]]));
    expect(() => resolveIn(v, [], 'target', { ...site, attribute: 'outs', configurable: false })).toThrow('//pkg:x: attribute "outs" is not configurable');
    expect(resolveIn(['x'], [], 'target', { ...site, attribute: 'outs', configurable: false })).toEqual(['x']);
  });

  it('condition keys are made canonical before matching and in messages', () => {
    const v = select(
      selector([
        [':opt', 'O'],
        ['//conditions:default', 'D'],
      ]),
    );
    const relative: SelectSite = { ...site, canonicalizeCondition: (raw) => (raw.startsWith(':') ? `//c${raw}` : raw) };
    expect(resolveIn(v, ['-c', 'opt'], 'target', relative)).toBe('O');
    expect(() => resolveIn(select(selector([[':opt', 'O']])), [], 'target', relative)).toThrow('Conditions checked:\n //c:opt');
  });

  it("resolves loading's coerced select: plain parts and selectors concatenated, no_match_error in the message", () => {
    const stored = new SelectorList<readonly string[]>([
      ['base'],
      new Selector(
        [
          ['//c:opt', ['o']],
          [DEFAULT_CONDITION, ['d']],
        ],
        '',
      ),
    ]);
    expect(resolveIn(stored, ['-c', 'opt'])).toEqual(['base', 'o']);
    expect(resolveIn(stored, [])).toEqual(['base', 'd']);
    expect(() => resolveIn(select(selector([['//c:opt', 1]], 'need opt')), [])).toThrow("doesn't match this configuration: need opt");
    expect(conditionLabels(stored)).toEqual(['//c:opt']);
  });

  it('lists the conditions a value needs, without the default', () => {
    const v = select(
      selector([
        ['//c:opt', 1],
        [DEFAULT_CONDITION, 2],
      ]),
      selector([
        ['//c:k8', 3],
        ['//c:opt', 4],
      ]),
    );
    expect(conditionLabels(v)).toEqual(['//c:opt', '//c:k8']);
    expect(conditionLabels('plain')).toEqual([]);
  });
});
