import { describe, expect, it } from 'vitest';
import { BUILD_SETTING_RULE_CLASSES, NATIVE_RULE_CLASSES, Selector, SelectorList } from '../../../src/loading/index.js';
import { errorsOf, loadFixture } from '../load-helper.js';

// The accepted attribute names: Bazel's documented attributes of each rule.
const TABLE: Record<string, string> = {
  alias:
    'name, actual, aspect_hints, compatible_with, deprecation, features, package_metadata, restricted_to, tags, target_compatible_with, testonly, visibility',
  config_setting:
    'name, aspect_hints, constraint_values, define_values, deprecation, features, flag_values, licenses, package_metadata, tags, testonly, values, visibility',
  filegroup:
    'name, srcs, data, aspect_hints, compatible_with, deprecation, features, licenses, output_group, package_metadata, restricted_to, tags, target_compatible_with, testonly, visibility',
  genquery:
    'name, deps, data, aspect_hints, compatible_with, compressed_output, deprecation, exec_compatible_with, exec_group_compatible_with, exec_properties, expression, features, licenses, opts, package_metadata, restricted_to, scope, strict, tags, target_compatible_with, testonly, visibility',
  genrule:
    'name, srcs, outs, aspect_hints, cmd, cmd_bash, cmd_bat, cmd_ps, compatible_with, deprecation, exec_compatible_with, exec_group_compatible_with, exec_properties, executable, features, licenses, local, message, output_licenses, output_to_bindir, package_metadata, restricted_to, tags, target_compatible_with, testonly, toolchains, tools, visibility',
  starlark_doc_extract:
    'name, deps, src, data, allow_unused_doc_comments, aspect_hints, compatible_with, deprecation, exec_compatible_with, exec_group_compatible_with, exec_properties, features, licenses, package_metadata, render_main_repo_name, restricted_to, symbol_names, tags, target_compatible_with, testonly, visibility',
  test_suite:
    'name, aspect_hints, compatible_with, deprecation, features, licenses, package_metadata, restricted_to, tags, target_compatible_with, testonly, tests, visibility',
};
const MANDATORY: Record<string, string[]> = {
  alias: ['name', 'actual'],
  config_setting: ['name'],
  filegroup: ['name'],
  genquery: ['name', 'expression', 'scope'],
  genrule: ['name', 'outs'],
  starlark_doc_extract: ['name', 'src'],
  test_suite: ['name'],
};
const NONCONFIGURABLE: Record<string, string[]> = {
  config_setting: TABLE.config_setting!.split(', ').filter((a) => a !== 'name'),
  genrule: ['outs', 'executable', 'output_to_bindir', 'toolchains'],
  test_suite: ['tags', 'tests'],
};

/** A valid value of each attribute type, as BUILD text. */
const SAMPLE: Record<string, string> = {
  label: '":x"',
  label_list: '[":x"]',
  string: '"s"',
  string_list: '["s"]',
  string_dict: '{"k": "v"}',
  string_list_dict: '{"k": ["v"]}',
  label_keyed_string_dict: '{":x": "v"}',
  label_list_dict: '{"k": [":x"]}',
  bool: 'True',
  int: '1',
  output: '"o.txt"',
  output_list: '["o.txt"]',
  license: '["notice"]',
};

function minimal(rule: string): Record<string, string> {
  return (
    {
      alias: { actual: '":x"' },
      config_setting: { values: '{"cpu": "k8"}' },
      genquery: { expression: '"//x"', scope: '[":x"]' },
      genrule: { outs: '["o.txt"]' },
      starlark_doc_extract: { src: '"a.bzl"' },
    }[rule] ?? {}
  );
}

function call(rule: string, attrs: Record<string, string>): string {
  return `${rule}(\n${Object.entries(attrs)
    .map(([k, v]) => `    ${k} = ${v},\n`)
    .join('')})\n`;
}

describe('attribute tables of the seven rules', () => {
  for (const [ruleName, list] of Object.entries(TABLE)) {
    const names = list.split(', ');
    it(`${ruleName} declares exactly the accepted names`, () => {
      expect([...NATIVE_RULE_CLASSES.get(ruleName)!.attributes.keys()].sort()).toEqual([...names].sort());
    });

    it(`${ruleName} accepts every accepted name with a value of its type`, () => {
      const rc = NATIVE_RULE_CLASSES.get(ruleName)!;
      const attrs: Record<string, string> = { name: '"t"' };
      for (const n of names) {
        if (n === 'name') continue;
        if (ruleName === 'genrule' && n === 'executable') attrs[n] = 'False';
        else if (n === 'visibility') attrs[n] = '["//visibility:public"]';
        else attrs[n] = SAMPLE[rc.attributes.get(n)!.type]!;
      }
      const { pkg } = loadFixture({ 'pkg/BUILD': call(ruleName, attrs) });
      expect(errorsOf(pkg)).toEqual([]);
      expect(pkg.targets.get('t')?.kind).toBe('rule');
    });

    it(`${ruleName} rejects an unknown attribute`, () => {
      const { pkg } = loadFixture({ 'pkg/BUILD': call(ruleName, { name: '"t"', ...minimal(ruleName), bogus: '1' }) });
      expect(errorsOf(pkg)).toEqual([`pkg/BUILD:1:1: //pkg:t: no such attribute 'bogus' in '${ruleName}' rule`]);
    });

    for (const m of MANDATORY[ruleName]!) {
      it(`${ruleName} enforces mandatory '${m}'`, () => {
        const attrs: Record<string, string> = { name: '"t"', ...minimal(ruleName) };
        delete attrs[m];
        const { pkg } = loadFixture({ 'pkg/BUILD': call(ruleName, attrs) });
        const expected =
          m === 'name'
            ? `missing value for mandatory attribute 'name' in '${ruleName}' rule`
            : `//pkg:t: missing value for mandatory attribute '${m}' in '${ruleName}' rule`;
        expect(errorsOf(pkg)).toEqual([`pkg/BUILD:1:1: ${expected}`]);
      });
    }

    for (const n of NONCONFIGURABLE[ruleName] ?? []) {
      it(`${ruleName}.${n} rejects select()`, () => {
        const rc = NATIVE_RULE_CLASSES.get(ruleName)!;
        const value = `select({"//conditions:default": ${SAMPLE[rc.attributes.get(n)!.type]}})`;
        const { pkg } = loadFixture({ 'pkg/BUILD': call(ruleName, { name: '"t"', ...minimal(ruleName), [n]: value }) });
        // Bazel 2.1.0 (checked with .cache/bazel/2.1.0) also reports a mandatory attribute as missing then.
        const missing = rc.attributes.get(n)!.mandatory ? [`pkg/BUILD:1:1: //pkg:t: missing value for mandatory attribute '${n}' in '${ruleName}' rule`] : [];
        expect(errorsOf(pkg)).toEqual([`pkg/BUILD:1:1: //pkg:t: attribute "${n}" is not configurable`, ...missing]);
      });
    }
  }

  it('configurable attributes keep select() unresolved', () => {
    const { pkg } = loadFixture({
      'pkg/BUILD': call('genrule', { name: '"t"', outs: '["o"]', cmd: 'select({":c": "a", "//conditions:default": "b"}) + "x"' }),
    });
    expect(errorsOf(pkg)).toEqual([]);
    const t = pkg.targets.get('t');
    expect(t?.kind === 'rule' && t.attrs.get('cmd')).toStrictEqual(
      new SelectorList([
        new Selector(
          [
            ['//pkg:c', 'a'],
            ['//conditions:default', 'b'],
          ],
          '',
        ),
        'x',
      ]),
    );
  });
});

describe('declaration-time checks', () => {
  it('config_setting needs values, define_values, flag_values or constraint_values', () => {
    const { pkg } = loadFixture({ 'pkg/BUILD': 'config_setting(name = "c")\nconfig_setting(name = "d", define_values = {"a": "b"})\n' });
    expect(errorsOf(pkg)).toEqual([
      'pkg/BUILD:1:1: in config_setting rule //pkg:c: Either values, flag_values or constraint_values must be specified and non-empty',
    ]);
  });

  it('genrule with executable = True needs exactly one out', () => {
    const { pkg } = loadFixture({
      'pkg/BUILD': 'genrule(name = "g", outs = ["a", "b"], executable = True, cmd = "x")\ngenrule(name = "h", outs = ["c"], executable = 1, cmd = "x")\n',
    });
    expect(errorsOf(pkg)).toEqual([
      'pkg/BUILD:1:1: in executable attribute of genrule rule //pkg:g: if genrules produce executables, they are allowed only one output. If you need the executable=1 argument, then you should split this genrule into genrules producing single outputs',
    ]);
  });

  it('genrule outs may not cross a package boundary or leave the package', () => {
    const { pkg } = loadFixture({
      'pkg/BUILD':
        'genrule(name = "g", outs = ["sub/x.txt"], cmd = "x")\ngenrule(name = "h", outs = ["//other:y"], cmd = "x")\ngenrule(name = "i", outs = ["dir/ok.txt"], cmd = "x")\n',
      'pkg/sub/BUILD': '',
    });
    expect(errorsOf(pkg)).toEqual([
      "pkg/BUILD:1:1: //pkg:g: output file 'sub/x.txt' of attribute 'outs' crosses a package boundary: Label '//pkg:sub/x.txt' is invalid because 'pkg/sub' is a subpackage; perhaps you meant to put the colon here: '//pkg/sub:x.txt'?",
      "pkg/BUILD:2:1: //pkg:h: label '//other:y' in attribute 'outs' in 'genrule' rule is not in the current package 'pkg'",
    ]);
    expect(pkg.targets.get('dir/ok.txt')?.kind).toBe('generated');
  });

  it("reports duplicate target names in Bazel's Package.Builder wording", () => {
    const { pkg } = loadFixture({
      'pkg/BUILD': 'filegroup(name = "x")\ngenrule(name = "x", outs = ["o"], cmd = "")\ngenrule(name = "y", outs = ["x"], cmd = "")\n',
    });
    expect(errorsOf(pkg)).toEqual(["pkg/BUILD:2:1: genrule rule 'x' conflicts with existing filegroup rule, defined at pkg/BUILD:1:1"]);
    // Bazel 2.1.0 stops evaluating the file at a name conflict: the third rule is never declared.
    expect(pkg.targets.has('y')).toBe(false);
    const out = loadFixture({ 'pkg/BUILD': 'filegroup(name = "x")\ngenrule(name = "y", outs = ["x"], cmd = "")\n' }).pkg;
    expect(errorsOf(out)).toEqual(["pkg/BUILD:2:1: generated file 'x' in rule 'y' conflicts with existing filegroup rule, defined at pkg/BUILD:1:1"]);
  });

  it('rejects invalid target names and wrong types', () => {
    const { pkg } = loadFixture({
      'pkg/BUILD': [
        'filegroup(name = "a:b")',
        'filegroup(name = "t1", srcs = "x")',
        'filegroup(name = "t2", srcs = [1])',
        'genrule(name = "t3", outs = ["o"], cmd = 3)',
        'filegroup(name = "t4", srcs = ["//a:b:c"])',
        'filegroup(name = "t5", tags = "x")',
        'genrule(name = "t6", outs = ["o6"], executable = 2)',
        'config_setting(name = "t7", values = {"a": 1})',
        '',
      ].join('\n'),
    });
    expect(errorsOf(pkg)).toEqual([
      "pkg/BUILD:1:1: illegal rule name: a:b: invalid target name 'a:b': target names may not contain ':'",
      `pkg/BUILD:2:1: //pkg:t1: expected value of type 'list(label)' for attribute 'srcs' in 'filegroup' rule, but got "x" (string)`,
      "pkg/BUILD:3:1: //pkg:t2: expected value of type 'string' for element 0 of attribute 'srcs' in 'filegroup' rule, but got 1 (int)",
      "pkg/BUILD:4:1: //pkg:t3: expected value of type 'string' for attribute 'cmd' in 'genrule' rule, but got 3 (int)",
      "pkg/BUILD:5:1: //pkg:t4: invalid label '//a:b:c' in element 0 of attribute 'srcs' in 'filegroup' rule: invalid target name 'b:c': target names may not contain ':'",
      `pkg/BUILD:6:1: //pkg:t5: expected value of type 'list(string)' for attribute 'tags' in 'filegroup' rule, but got "x" (string)`,
      "pkg/BUILD:7:1: //pkg:t6: expected value of type 'boolean' for attribute 'executable' in 'genrule' rule, but got 2 (int)",
      "pkg/BUILD:8:1: //pkg:t7: expected value of type 'string' for dict value element of attribute 'values' in 'config_setting' rule, but got 1 (int)",
    ]);
  });

  it('checks allowed values (sh_test size)', () => {
    const { pkg } = loadFixture({ 'pkg/BUILD': 'sh_test(name = "t", srcs = ["t.sh"], size = "huge")\n' });
    expect(errorsOf(pkg)).toEqual([
      "pkg/BUILD:1:1: //pkg:t: invalid value in 'size' attribute: has to be one of 'small', 'medium', 'large' or 'enormous' instead of 'huge'",
    ]);
  });
});

describe('supporting rules', () => {
  it('declares platforms, constraints, sh_* and build settings', () => {
    const { pkg } = loadFixture({
      'pkg/BUILD': [
        'constraint_setting(name = "s", default_constraint_value = ":v")',
        'constraint_value(name = "v", constraint_setting = ":s")',
        'platform(name = "p", constraint_values = [":v", "@platforms//os:linux"], exec_properties = {"a": "b"})',
        'sh_library(name = "l", srcs = ["l.sh"])',
        'sh_binary(name = "b", srcs = ["b.sh"], deps = [":l"], args = ["x"], env = {"A": "1"})',
        'sh_test(name = "t", srcs = ["t.sh"], size = "small", timeout = "short", flaky = True, shard_count = 2, args = [], env = {}, data = [])',
        'string_flag(name = "sf", build_setting_default = "a", values = ["a", "b"])',
        'bool_flag(name = "bf", build_setting_default = True)',
        'int_flag(name = "if", build_setting_default = 3)',
        'string_list_flag(name = "slf", build_setting_default = ["a"])',
        '',
      ].join('\n'),
    });
    expect(errorsOf(pkg)).toEqual([]);
    expect([...pkg.targets.values()].filter((t) => t.kind === 'rule').map((t) => (t.kind === 'rule' ? t.ruleClass : ''))).toEqual([
      'constraint_setting',
      'constraint_value',
      'platform',
      'sh_library',
      'sh_binary',
      'sh_test',
      'string_flag',
      'bool_flag',
      'int_flag',
      'string_list_flag',
    ]);
    expect(BUILD_SETTING_RULE_CLASSES.get('bool_flag')!.attributes.get('build_setting_default')!.mandatory).toBe(true);
  });
});
