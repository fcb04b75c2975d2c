/** Loading: workspaces, labels, packages, glob, load(), rule classes (attribute schemas). */
export { Label, LabelSyntaxError, MAIN_REPO, validatePackageName, validateTargetName, type PackageContext } from './label.js';
export {
  Workspace,
  findWorkspaceRoot,
  readWorkspaceName,
  readRegistrations,
  type Registrations,
  NoWorkspaceError,
  BUILD_FILE_NAMES,
  CONVENIENCE_SYMLINKS,
} from './workspace.js';
export { DirectoryLister, EntryKind, type DirEntry } from './directory-lister.js';
export { glob, checkGlobPattern, globPatternMatches, GlobError, type GlobOptions, type GlobContext } from './glob.js';
export { PackageLoader, NoSuchPackageError, type PackageLoaderOptions, type PackageRecord } from './package-loader.js';
export { packageId, type Package, type PackageError } from './package.js';
export { LoadingError, type PackageDefaults } from './package-builder.js';
export { targetKind, type Target, type RuleTarget, type SourceFileTarget, type GeneratedFileTarget, type PackageGroupTarget } from './target.js';
export {
  type AttrType,
  type AttrValue,
  type PlainAttrValue,
  type AttributeSpec,
  TYPE_NAMES,
} from './rules/attribute.js';
export type { RuleClass } from './rules/rule-class.js';
export { NATIVE_RULE_CLASSES, BUILD_SETTING_RULE_CLASSES } from './rules/native-rules.js';
export { SelectorList, Selector, DEFAULT_CONDITION } from './select.js';
export { StarLabel } from './starlark-label.js';
export { expandTestSuites, suiteTagFilter, splitTagFilter, type TestSuiteGraph, type TestSuiteError } from './test-suite-expansion.js';
export { PackageTestSuiteGraph, isTestRuleClass, ruleStringList, type LoadedTarget } from './package-test-suite-graph.js';
export { Depset, depsetOf, type DepsetOrder } from './depset.js';
export {
  Provider,
  ProviderInstance,
  DEFAULT_INFO,
  OUTPUT_GROUP_INFO,
  INSTRUMENTED_FILES_INFO,
  RUN_ENVIRONMENT_INFO,
  ANALYSIS_TEST_RESULT_INFO,
  ANALYSIS_FAILURE_INFO,
} from './provider.js';
export {
  TOOLCHAIN_INFO,
  TEMPLATE_VARIABLE_INFO,
  CONSTRAINT_SETTING_INFO,
  CONSTRAINT_VALUE_INFO,
  PLATFORM_INFO,
  ToolchainTypeRequirement,
} from './platform-common.js';
export { EXECUTION_INFO } from './testing-module.js';
export { StarlarkTransition } from './starlark-transition.js';
export { ExecGroup, Subrule } from './exec-group.js';
export { UnsupportedValue } from './unsupported.js';
export type { BzlVisibility } from './bzl-visibility.js';
export { StarlarkRuleFunction, type ToolchainRequest } from './bzl-builtins.js';
export { implicitOutputName } from './package-builder.js';
export type { StarlarkRuleInfo, BuildSettingSpec } from './rules/rule-class.js';
export type { StarlarkAttributeOptions } from './rules/attribute.js';
export type { BzlModule } from './bzl-module.js';
export { StarlarkAspect, type AspectDefinition, type ProviderRef } from './starlark-aspect.js';
export { RepositoryRule } from './repository-rule.js';
export { ModuleExtension, TagClass } from './module-extension.js';
export { SymbolicMacro } from './symbolic-macro.js';
