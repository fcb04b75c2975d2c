import { jsonModule, structBuiltin, type Value } from '../starlark/index.js';
import { declareStarlarkRule, packageFn, selectBuiltin } from './build-builtins.js';
import { attrModule, configModule, ruleBuiltin } from './bzl-builtins.js';
import { visibilityBuiltin } from './bzl-visibility.js';
import { depsetBuiltin } from './depset.js';
import { execGroupBuiltin, subruleBuiltin } from './exec-group.js';
import type { PackageContext } from './label.js';
import { moduleExtensionBuiltin, tagClassBuiltin } from './module-extension.js';
import { configCommonModule, platformCommonModule } from './platform-common.js';
import { BUILTIN_PROVIDERS, coverageCommonModule, providerBuiltin } from './provider.js';
import { repositoryRuleBuiltin } from './repository-rule.js';
import { aspectBuiltin } from './starlark-aspect.js';
import { labelBuiltin } from './starlark-label.js';
import { analysisTestTransitionBuiltin, execTransitionBuiltin, transitionBuiltin } from './starlark-transition.js';
import { macroBuiltin } from './symbolic-macro.js';
import { testingModule } from './testing-module.js';
import { unsupportedEntries } from './unsupported.js';

/**
 * Top-level names of a present-day Bazel .bzl file (BazelStarlarkEnvironment's BUILD-loaded .bzl
 * environment: StarlarkGlobals, the rule class provider's top-level modules and providers, and the
 * builtins' exported_toplevels) that Kiln does not honour yet. Each resolves and loads; a module's
 * fields are placeholders too; calling one fails with "X is not supported by Kiln".
 */
const UNSUPPORTED_BZL_MODULES = ['apple_common', 'cc_common', 'java_common', 'proto', 'proto_common_do_not_use', 'android_common'];
const UNSUPPORTED_BZL_FUNCTIONS = ['configuration_field', 'cc_proto_aspect'];
const UNSUPPORTED_BZL_PROVIDERS = [
  'Actions',
  'CcInfo',
  'CcToolchainConfigInfo',
  'CcSharedLibraryInfo',
  'CcSharedLibraryHintInfo',
  'DebugPackageInfo',
  'JavaInfo',
  'JavaPluginInfo',
  'PackageSpecificationInfo',
  'ProguardSpecProvider',
  'ProtoInfo',
  'PyInfo',
  'PyRuntimeInfo',
  'AndroidIdeInfo',
];

/** Every name Kiln binds in a .bzl file that is only a placeholder (for tests and documentation). */
export const UNSUPPORTED_BZL_NAMES: readonly string[] = [...UNSUPPORTED_BZL_MODULES, ...UNSUPPORTED_BZL_FUNCTIONS, ...UNSUPPORTED_BZL_PROVIDERS];

/** Placeholders are made once: they hold nothing a file could change. */
const UNSUPPORTED_BZL_VALUES: readonly [string, Value][] = [
  ...unsupportedEntries(UNSUPPORTED_BZL_MODULES, 'module'),
  ...unsupportedEntries(UNSUPPORTED_BZL_FUNCTIONS, 'function'),
  ...unsupportedEntries(UNSUPPORTED_BZL_PROVIDERS, 'provider'),
];

/** The predeclared names of a .bzl file in package `context`, whose own label is `bzlLabel`. */
export function bzlPredeclared(context: PackageContext, bzlLabel: string, native: Value): Map<string, Value> {
  return new Map<string, Value>([
    ...UNSUPPORTED_BZL_VALUES,
    ['native', native],
    ['struct', structBuiltin],
    ['depset', depsetBuiltin],
    ['provider', providerBuiltin],
    ['rule', ruleBuiltin(declareStarlarkRule, context)],
    ['aspect', aspectBuiltin(context)],
    ['macro', macroBuiltin],
    ['repository_rule', repositoryRuleBuiltin],
    ['module_extension', moduleExtensionBuiltin(bzlLabel)],
    ['tag_class', tagClassBuiltin],
    ['attr', attrModule(context)],
    ['config', configModule],
    ['config_common', configCommonModule(context)],
    ['platform_common', platformCommonModule],
    ['coverage_common', coverageCommonModule],
    ['testing', testingModule],
    ['transition', transitionBuiltin],
    ['exec_transition', execTransitionBuiltin],
    ['analysis_test_transition', analysisTestTransitionBuiltin],
    ['exec_group', execGroupBuiltin],
    ['subrule', subruleBuiltin],
    ['visibility', visibilityBuiltin],
    ...BUILTIN_PROVIDERS,
    ['select', selectBuiltin],
    ['json', jsonModule()],
    ['Label', labelBuiltin(context)],
  ]);
}

/** The predeclared names of a BUILD file: the package functions and rules (`functions`), and what every file has. */
export function buildPredeclared(functions: ReadonlyMap<string, Value>): Map<string, Value> {
  return new Map<string, Value>([
    ...functions,
    ['package', packageFn],
    ['select', selectBuiltin],
    ['struct', structBuiltin],
    ['depset', depsetBuiltin],
    ['json', jsonModule()],
  ]);
}
