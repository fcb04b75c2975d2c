import { describe, expect, it } from 'vitest';
import { Selector, SelectorList, type Package } from '../../src/loading/index.js';
import { decodePackage, encodePackage } from '../../src/loading/package-codec.js';
import { workspaceFixture } from './fixture.js';
import { errorsOf, newLoader, rule } from './load-helper.js';
import { SELECT_WORKSPACE } from './select-fixture.js';

// print() output as Bazel 2.1.0 printed it for the same lines (`bazel --batch query`).
const PRINTS = `# line 1
config_setting(name = "opt", values = {"compilation_mode": "opt"})
OPT = select({":opt": ["o.txt"], "//conditions:default": ["d.txt"]})
print("str:", str(OPT))
print("repr:", repr(OPT))
print("type:", type(OPT), type(OPT) == "select")
print("left:", ["a.txt"] + OPT)
print("right:", OPT + ["b.txt"])
print("both:", OPT + select({"//conditions:default": []}, no_match_error = "boom"))
print("nme:", repr(select({":opt": "x"}, no_match_error = "need opt")))
print("strings:", "a" + select({"//conditions:default": "b"}))
`;

function load(files: Readonly<Record<string, string>> = SELECT_WORKSPACE): { pkg: Package; events: string[] } {
  const root = workspaceFixture(files);
  const events: string[] = [];
  const pkg = newLoader(root, events).loadPackage('', 'p');
  expect(errorsOf(pkg)).toEqual([]);
  return { pkg, events };
}

const OPT_SELECTOR = new Selector(
  [
    ['//p:opt', ['//p:o.txt']],
    ['//conditions:default', ['//p:d.txt']],
  ],
  '',
);

describe('select()', () => {
  it('prints, types and concatenates as in Bazel 2.1.0 (no_match_error is not printed)', () => {
    expect(load({ WORKSPACE: '', 'p/BUILD': PRINTS }).events.filter((e) => e.startsWith('DEBUG'))).toEqual([
      'DEBUG: p/BUILD:4:1: str: select({":opt": ["o.txt"], "//conditions:default": ["d.txt"]})',
      'DEBUG: p/BUILD:5:1: repr: select({":opt": ["o.txt"], "//conditions:default": ["d.txt"]})',
      'DEBUG: p/BUILD:6:1: type: select True',
      'DEBUG: p/BUILD:7:1: left: ["a.txt"] + select({":opt": ["o.txt"], "//conditions:default": ["d.txt"]})',
      'DEBUG: p/BUILD:8:1: right: select({":opt": ["o.txt"], "//conditions:default": ["d.txt"]}) + ["b.txt"]',
      'DEBUG: p/BUILD:9:1: both: select({":opt": ["o.txt"], "//conditions:default": ["d.txt"]}) + select({"//conditions:default": []})',
      'DEBUG: p/BUILD:10:1: nme: select({":opt": "x"})',
      'DEBUG: p/BUILD:11:1: strings: "a" + select({"//conditions:default": "b"})',
    ]);
  });

  it('is kept on the target as the same type, coerced: canonical keys and labels, parts in order', () => {
    const { pkg } = load();
    const srcs = (name: string) => rule(pkg, name).attrs.get('srcs');
    expect(srcs('left')).toBeInstanceOf(SelectorList);
    expect(srcs('left')).toStrictEqual(new SelectorList([['//p:a.txt'], OPT_SELECTOR]));
    expect(srcs('right')).toStrictEqual(new SelectorList([OPT_SELECTOR, ['//p:b.txt']]));
    expect(srcs('both')).toStrictEqual(
      new SelectorList([
        ['//p:a.txt'],
        OPT_SELECTOR,
        new Selector(
          [
            ['//p:opt', ['//p:c.txt']],
            ['//conditions:default', []],
          ],
          '',
        ),
        ['//p:b.txt'],
      ]),
    );
    // A macro passes the select through untouched.
    expect(srcs('macro')).toStrictEqual(new SelectorList([OPT_SELECTOR, ['//p:m.txt']]));
    const cmd = rule(pkg, 'g').attrs.get('cmd') as SelectorList<string>;
    expect((cmd.parts[1] as Selector<string>).noMatchError).toBe('nope');
    // Every label a branch or plain part names is a dependency, conditions included.
    expect(rule(pkg, 'both').dependencies).toEqual(expect.arrayContaining(['//p:opt', '//p:a.txt', '//p:o.txt', '//p:d.txt', '//p:c.txt', '//p:b.txt']));
  });

  it('survives the package cache as the same type, no_match_error included', () => {
    const { pkg } = load();
    const decoded = decodePackage(encodePackage(pkg));
    for (const name of ['left', 'both', 'macro', 'g', 'nm']) {
      const [before, after] = [rule(pkg, name), rule(decoded, name)];
      for (const attr of ['srcs', 'cmd']) {
        if (!before.attrs.has(attr)) continue;
        expect(after.attrs.get(attr)).toBeInstanceOf(SelectorList);
        expect(after.attrs.get(attr)).toStrictEqual(before.attrs.get(attr));
      }
    }
    expect(((rule(decoded, 'g').attrs.get('cmd') as SelectorList<string>).parts[1] as Selector<string>).noMatchError).toBe('nope');
  });

  // Not Bazel 2.1.0's behaviour, which returns an internal 'SelectorList' that `+` rejects: this pins
  // Kiln's (a select of label strings that a BUILD file can use again), unchanged by the one select type.
  it('existing_rule() hands the select back to Starlark as a select', () => {
    const root = workspaceFixture({
      WORKSPACE: '',
      'p/BUILD': [
        'filegroup(name = "f", srcs = ["a.txt"] + select({"//conditions:default": ["b.txt"]}, no_match_error = "x"))',
        's = existing_rule("f")["srcs"]',
        'print(type(s), s)',
        'filegroup(name = "g", srcs = s + ["c.txt"])',
        '',
      ].join('\n'),
    });
    const events: string[] = [];
    const pkg = newLoader(root, events).loadPackage('', 'p');
    expect(errorsOf(pkg)).toEqual([]);
    expect(events.filter((e) => e.startsWith('DEBUG'))).toEqual(['DEBUG: p/BUILD:3:1: select ["//p:a.txt"] + select({"//conditions:default": ["//p:b.txt"]})']);
    expect(rule(pkg, 'g').attrs.get('srcs')).toStrictEqual(
      new SelectorList([['//p:a.txt'], new Selector([['//conditions:default', ['//p:b.txt']]], 'x'), ['//p:c.txt']]),
    );
  });
});
