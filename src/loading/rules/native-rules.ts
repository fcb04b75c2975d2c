import { SelectorList } from '../select.js';
import { attr, type AttrValue } from './attribute.js';
import { CC_RULE_CLASSES } from './cc-rule-classes.js';
import { BASE, defineRuleClass, WITH_EXEC, WITH_LICENSES, type RuleClass } from './rule-class.js';

const SIZES = ['small', 'medium', 'large', 'enormous'];
const TIMEOUTS = ['short', 'moderate', 'long', 'eternal'];

function isEmpty(v: AttrValue | undefined): boolean {
  if (v === undefined || v === null) return true;
  if (v instanceof SelectorList) return false;
  return Array.isArray(v) ? v.length === 0 : false;
}

const alias = defineRuleClass('alias', {
  common: BASE,
  attributes: [attr('actual', 'label', { mandatory: true })],
});

// Every attribute of config_setting is nonconfigurable: config_setting is what select() reads.
const configSetting = defineRuleClass('config_setting', {
  common: ['name', 'aspect_hints', 'deprecation', 'features', 'licenses', 'package_metadata', 'tags', 'testonly', 'visibility'],
  attributes: [
    attr('features', 'string_list', { configurable: false }),
    attr('aspect_hints', 'label_list', { configurable: false }),
    attr('values', 'string_dict', { configurable: false }),
    attr('define_values', 'string_dict', { configurable: false }),
    attr('flag_values', 'label_keyed_string_dict', { configurable: false }),
    attr('constraint_values', 'label_list', { configurable: false }),
  ],
  checks: [
    (rule, report) => {
      const a = rule.attrs;
      if (isEmpty(a.get('values')) && isEmpty(a.get('define_values')) && isEmpty(a.get('constraint_values')) && isEmpty(a.get('flag_values'))) {
        // Bazel's ConfigSetting wording.
        report(null, 'Either values, flag_values or constraint_values must be specified and non-empty');
      }
    },
  ],
});

const filegroup = defineRuleClass('filegroup', {
  common: WITH_LICENSES,
  attributes: [attr('srcs', 'label_list'), attr('output_group', 'string'), attr('data', 'label_list')],
});

const genquery = defineRuleClass('genquery', {
  common: WITH_EXEC,
  attributes: [
    attr('deps', 'label_list'),
    attr('data', 'label_list'),
    attr('scope', 'label_list', { mandatory: true }),
    attr('strict', 'bool', { default: true }),
    attr('expression', 'string', { mandatory: true }),
    attr('opts', 'string_list'),
    attr('compressed_output', 'bool'),
  ],
});

const genrule = defineRuleClass('genrule', {
  common: WITH_EXEC,
  attributes: [
    attr('toolchains', 'label_list', { configurable: false }),
    attr('srcs', 'label_list'),
    attr('tools', 'label_list'),
    attr('outs', 'output_list', { mandatory: true, configurable: false }),
    attr('cmd', 'string'),
    attr('cmd_bash', 'string'),
    attr('cmd_bat', 'string'),
    attr('cmd_ps', 'string'),
    attr('output_to_bindir', 'bool', { configurable: false }),
    attr('local', 'bool'),
    attr('message', 'string'),
    attr('output_licenses', 'license'),
    attr('executable', 'bool', { configurable: false }),
  ],
  checks: [
    (rule, report) => {
      if (rule.attrs.get('executable') === true && rule.outputs.length !== 1) {
        // Bazel's GenRuleBase wording.
        report(
          'executable',
          'if genrules produce executables, they are allowed only one output. If you need the executable=1 argument, then you should split this genrule into genrules producing single outputs',
        );
      }
    },
  ],
});

const starlarkDocExtract = defineRuleClass('starlark_doc_extract', {
  common: WITH_EXEC,
  attributes: [
    attr('deps', 'label_list'),
    attr('src', 'label', { mandatory: true }),
    attr('data', 'label_list'),
    attr('allow_unused_doc_comments', 'bool'),
    attr('render_main_repo_name', 'bool'),
    attr('symbol_names', 'string_list'),
  ],
  // The text form is built only when its label is requested; the binary form is the default output.
  implicitOutputs: [
    ['binaryproto', '%{name}.binaryproto'],
    ['textproto', '%{name}.textproto'],
  ],
});

const testSuite = defineRuleClass('test_suite', {
  common: WITH_LICENSES,
  attributes: [attr('tests', 'label_list', { configurable: false })],
});

const constraintSetting = defineRuleClass('constraint_setting', {
  common: WITH_LICENSES,
  attributes: [attr('default_constraint_value', 'label', { configurable: false })],
});

const constraintValue = defineRuleClass('constraint_value', {
  common: WITH_LICENSES,
  attributes: [attr('constraint_setting', 'label', { mandatory: true, configurable: false })],
});

const platform = defineRuleClass('platform', {
  common: [...WITH_LICENSES, 'exec_properties'],
  attributes: [
    attr('constraint_values', 'label_list', { configurable: false }),
    attr('parents', 'label_list', { configurable: false }),
    attr('remote_execution_properties', 'string', { configurable: false }),
    attr('flags', 'string_list', { configurable: false }),
    attr('required_settings', 'label_list', { configurable: false }),
    attr('missing_toolchain_error', 'string', { configurable: false }),
    attr('check_toolchain_types', 'bool', { configurable: false }),
  ],
});

/** `toolchain_type(name)`: a label toolchains are registered for and rules ask for. */
const toolchainType = defineRuleClass('toolchain_type', {
  common: WITH_LICENSES,
  attributes: [attr('no_match_error', 'string', { configurable: false })],
});

/** `toolchain(name, toolchain_type, toolchain, ...)`: which target implements a toolchain type, and where it applies. */
const toolchain = defineRuleClass('toolchain', {
  common: WITH_LICENSES.filter((a) => a !== 'target_compatible_with'),
  attributes: [
    attr('toolchain_type', 'label', { mandatory: true, configurable: false }),
    attr('toolchain', 'label', { mandatory: true }),
    attr('exec_compatible_with', 'label_list', { configurable: false }),
    attr('target_compatible_with', 'label_list', { configurable: false }),
    attr('target_settings', 'label_list', { configurable: false }),
    attr('use_target_platform_constraints', 'bool', { configurable: false }),
  ],
});

// Declaration order is the order `query --output=build` prints (Bazel 2.1.0: deps, data, srcs).
const SH_COMMON = [attr('deps', 'label_list'), attr('data', 'label_list'), attr('srcs', 'label_list')];
const SH_RUNNABLE = [
  attr('args', 'string_list'),
  attr('env', 'string_dict'),
  attr('env_inherit', 'string_list'),
  attr('output_licenses', 'license'),
  attr('toolchains', 'label_list', { configurable: false }),
];

const shBinary = defineRuleClass('sh_binary', { common: WITH_EXEC, attributes: [...SH_COMMON, ...SH_RUNNABLE], executable: true });
// Test attributes come before args, as Bazel 2.1.0 prints them.
const shTest = defineRuleClass('sh_test', {
  common: WITH_EXEC,
  isTest: true,
  executable: true,
  attributes: [
    ...SH_COMMON,
    attr('size', 'string', { configurable: false, default: 'medium', values: SIZES }),
    attr('timeout', 'string', { configurable: false, default: null, values: TIMEOUTS }),
    attr('flaky', 'bool', { configurable: false }),
    attr('shard_count', 'int', { configurable: false, default: -1 }),
    attr('local', 'bool'),
    ...SH_RUNNABLE,
  ],
});
const shLibrary = defineRuleClass('sh_library', { common: WITH_LICENSES, attributes: SH_COMMON });

/** Skylib's common_settings rules: a build setting with a mandatory default. */
function buildSetting(name: string, type: 'string' | 'bool' | 'int' | 'string_list'): RuleClass {
  return defineRuleClass(name, {
    common: WITH_LICENSES,
    attributes: [
      attr('build_setting_default', type, { mandatory: true, configurable: false }),
      ...(type === 'string' ? [attr('values', 'string_list', { configurable: false })] : []),
      ...(type === 'string' ? [attr('make_variable', 'string', { configurable: false, default: null })] : []),
      attr('scope', 'string', { configurable: false, default: 'universal' }),
    ],
  });
}

/** label_flag and label_setting: a build setting whose value is a label; the target forwards that target's providers. */
const labelFlag = defineRuleClass('label_flag', {
  common: BASE,
  attributes: [attr('build_setting_default', 'label', { mandatory: true, configurable: false })],
});
const labelSetting = defineRuleClass('label_setting', {
  common: BASE,
  attributes: [attr('build_setting_default', 'label', { mandatory: true, configurable: false })],
});

/** Rule classes available as native functions in BUILD files and under `native.` in .bzl files. */
export const NATIVE_RULE_CLASSES: ReadonlyMap<string, RuleClass> = new Map(
  [
    alias,
    configSetting,
    filegroup,
    genquery,
    genrule,
    starlarkDocExtract,
    testSuite,
    constraintSetting,
    constraintValue,
    platform,
    toolchainType,
    toolchain,
    shBinary,
    shTest,
    shLibrary,
    labelFlag,
    labelSetting,
    ...CC_RULE_CLASSES,
  ].map((r) => [r.name, r]),
);

/** The rules of `@bazel_skylib//rules:common_settings.bzl`, also available as native rule classes. */
export const BUILD_SETTING_RULE_CLASSES: ReadonlyMap<string, RuleClass> = new Map(
  [
    buildSetting('string_flag', 'string'),
    buildSetting('bool_flag', 'bool'),
    buildSetting('int_flag', 'int'),
    buildSetting('string_list_flag', 'string_list'),
    buildSetting('string_setting', 'string'),
    buildSetting('bool_setting', 'bool'),
    buildSetting('int_setting', 'int'),
    buildSetting('string_list_setting', 'string_list'),
  ].map((r) => [r.name, r]),
);
