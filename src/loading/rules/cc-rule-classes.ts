import { attr } from './attribute.js';
import { defineRuleClass, WITH_EXEC, WITH_LICENSES, type RuleClass } from './rule-class.js';

/**
 * cc_library, cc_binary and cc_test with the attributes of Bazel's native C++ rules (the
 * CcLibrary/CcBinary rule definitions of Bazel's builtins), so BUILD files that use them load and
 * query as in Bazel; src/analysis/rules/cc-rules.ts builds them with the host's C++ compiler.
 */

const SIZES = ['small', 'medium', 'large', 'enormous'];
const TIMEOUTS = ['short', 'moderate', 'long', 'eternal'];

const COMPILED = [
  attr('srcs', 'label_list'),
  attr('deps', 'label_list'),
  attr('data', 'label_list'),
  attr('additional_compiler_inputs', 'label_list'),
  attr('additional_linker_inputs', 'label_list'),
  attr('copts', 'string_list'),
  attr('conlyopts', 'string_list'),
  attr('cxxopts', 'string_list'),
  attr('defines', 'string_list'),
  attr('local_defines', 'string_list'),
  attr('includes', 'string_list'),
  attr('linkopts', 'string_list'),
  attr('nocopts', 'string'),
  attr('win_def_file', 'label'),
  attr('toolchains', 'label_list', { configurable: false }),
];

const cc_library = defineRuleClass('cc_library', {
  common: WITH_LICENSES,
  attributes: [
    ...COMPILED,
    attr('hdrs', 'label_list'),
    attr('textual_hdrs', 'label_list'),
    attr('implementation_deps', 'label_list'),
    attr('include_prefix', 'string'),
    attr('strip_include_prefix', 'string'),
    attr('linkstatic', 'bool'),
    attr('alwayslink', 'bool'),
  ],
});

const RUNNABLE = [
  attr('args', 'string_list'),
  attr('env', 'string_dict'),
  attr('env_inherit', 'string_list'),
  attr('linkstatic', 'bool', { default: true }),
  attr('linkshared', 'bool', { configurable: false }),
  attr('malloc', 'label', { default: '@bazel_tools//tools/cpp:malloc' }),
  attr('link_extra_lib', 'label', { default: '@bazel_tools//tools/cpp:link_extra_lib' }),
  attr('dynamic_deps', 'label_list'),
  attr('stamp', 'int', { default: 0 }),
  attr('output_licenses', 'license'),
];

const cc_binary = defineRuleClass('cc_binary', { common: WITH_EXEC, attributes: [...COMPILED, ...RUNNABLE], executable: true });

const cc_test = defineRuleClass('cc_test', {
  common: WITH_EXEC,
  isTest: true,
  executable: true,
  attributes: [
    ...COMPILED,
    attr('size', 'string', { configurable: false, default: 'medium', values: SIZES }),
    attr('timeout', 'string', { configurable: false, default: null, values: TIMEOUTS }),
    attr('flaky', 'bool', { configurable: false }),
    attr('shard_count', 'int', { configurable: false, default: -1 }),
    attr('local', 'bool'),
    ...RUNNABLE.filter((a) => a.name !== 'linkstatic'),
    attr('linkstatic', 'bool'),
  ],
});

export const CC_RULE_CLASSES: readonly RuleClass[] = [cc_library, cc_binary, cc_test];
