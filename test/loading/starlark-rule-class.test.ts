import { describe, expect, it } from 'vitest';
import { decodePackage, encodePackage } from '../../src/loading/package-codec.js';
import { errorsOf, loadFixture, rule } from './load-helper.js';

const DEFS = `
def _impl(ctx):
    pass
my_rule = rule(
    implementation = _impl,
    attrs = {"_tool": attr.label(default = "//tools:t"), "srcs": attr.label_list(allow_files = True), "n": attr.int_list()},
    outputs = {"out": "%{name}.out"},
    doc = "Makes things.",
)
`;

describe('Starlark rule classes in loading', () => {
  it('records where the rule is defined; label defaults are dependencies; implicit outputs are generated files', () => {
    const { pkg } = loadFixture({
      'pkg/defs.bzl': DEFS,
      'pkg/BUILD': 'load(":defs.bzl", "my_rule")\nmy_rule(name = "x", srcs = ["a.c"], n = [1, 2])\n',
      'tools/BUILD': '',
    });
    expect(errorsOf(pkg)).toEqual([]);
    const x = rule(pkg, 'x');
    expect(x).toMatchObject({ ruleDefinition: '//pkg:defs.bzl%my_rule', outputs: ['x.out'] });
    expect(x.dependencies).toEqual(['//pkg:a.c', '//tools:t']);
    expect(x.attrs.get('n')).toEqual([1, 2]);
    expect(pkg.targets.get('x.out')).toMatchObject({ kind: 'generated', generatingRule: 'x' });
    expect(rule(decodePackage(encodePackage(pkg)), 'x').ruleDefinition).toBe('//pkg:defs.bzl%my_rule');
  });

  it('int_list attributes take ints only', () => {
    const { pkg } = loadFixture({ 'pkg/defs.bzl': DEFS, 'pkg/BUILD': 'load(":defs.bzl", "my_rule")\nmy_rule(name = "x", n = ["a"])\n', 'tools/BUILD': '' });
    expect(errorsOf(pkg)[0]).toContain("expected value of type 'int' for element 0 of attribute 'n' in 'my_rule' rule");
  });

  it('the loader finds the rule again from its key', () => {
    const { loader } = loadFixture({ 'pkg/defs.bzl': DEFS, 'pkg/BUILD': 'load(":defs.bzl", "my_rule")\n', 'tools/BUILD': '' });
    const r = loader.starlarkRule('//pkg:defs.bzl%my_rule');
    expect(r?.ruleClass?.starlark).toMatchObject({ key: '//pkg:defs.bzl%my_rule', doc: 'Makes things.', implicitOutputs: [['out', '%{name}.out']] });
    expect(loader.starlarkRule('//pkg:defs.bzl%nope')).toBeUndefined();
  });
});
