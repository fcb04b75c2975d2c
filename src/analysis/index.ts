// Build options, configurations, config_setting matching, select() and platforms (README.md).
export { BUILD_OPTIONS, BUILD_OPTION_DEFINITIONS } from './options/build-option-registry.js';
export { BuildOptions, type UserFlagSetting } from './options/build-options.js';
export { BuildOptionsParser, parseBuildOptions, bindUserFlagValues, canonicalFlagLabel, type ParsedBuildCommandLine } from './options/parse-build-options.js';
export {
  type BuildSettingType,
  type BuildSettingValue,
  type BuildSettingDefinition,
  convertBuildSettingText,
  userFlagValue,
  userFlagProblem,
  type BuildSettingSource,
} from './options/user-defined-flag.js';
export {
  type ConstraintValue,
  type PlatformDeclaration,
  type HostEnvironment,
  Platform,
  flattenPlatform,
  currentHost,
  hostConstraintValues,
  hostPlatformDeclaration,
  hostCpuName,
  HOST_PLATFORM_LABEL,
  OS_SETTING,
  CPU_SETTING,
} from './config/platform.js';
export {
  BuildConfiguration,
  createConfigurations,
  execConfigurationOf,
  type ConfigurationKind,
  type ConfigurationPair,
  type ConfigurationContext,
  type OutputDirectories,
} from './config/build-configuration.js';
export {
  type ConfigSettingDeclaration,
  type ConfigSetting,
  type ExpectedOption,
  ConfigSettingError,
  validateConfigSetting,
} from './config/config-setting.js';
export { type ConfigMatch, type BuildSettingLookup, matchConfigSetting, listMatches, refines } from './config/config-matching.js';
// select() itself (Selector, SelectorList, DEFAULT_CONDITION) is loading's: import it from there.
export { type SelectSite, SelectError, resolveSelect, concatValues, conditionLabels } from './config/select.js';
// Genrule command preparation (README.md).
export { type LocationEntry, type LocationContext, ExpansionFailure, expandLocations } from './expansion/location-expander.js';
export { type MakeVariableLookup, expandMakeVariables } from './expansion/make-variable-expander.js';
export {
  type GenruleCommandAttribute,
  type GenruleCommandInput,
  type GenruleCommand,
  type JavaRuntimeVariables,
  GenruleCommandError,
  GENRULE_SHELL_SETUP,
  prepareGenruleCommand,
} from './expansion/genrule-command.js';
export { configurationMakeVariables } from './expansion/configuration-make-variables.js';
export { expandRunArguments, expandRunValue, tokenize } from './expansion/run-arguments.js';
// Configured-target analysis (README.md).
export type {
  AnalysisTarget,
  RuleAnalysisTarget,
  SourceAnalysisTarget,
  GeneratedAnalysisTarget,
  PackageGroupAnalysisTarget,
  TargetGraph,
  FileEntry,
  ConfiguredTarget,
  RunEnvironment,
} from './configured/configured-target.js';
export { Analyzer, type AnalyzerOptions } from './configured/analyzer.js';
export { RuleError, type RuleContext } from './configured/rule-context.js';
export { isVisible } from './configured/visibility.js';
export { platformDeclarationsFrom, constraintValueOf } from './configured/platform-declarations.js';
export { LoadedTargetGraph } from './configured/loaded-target-graph.js';
export { IncrementalAnalysis, type AnalysisEventSinks } from './configured/incremental-analysis.js';
// The Starlark view of a configured target (cquery's --output=starlark binds it to `target`).
export { TargetValue, defaultInfoOf } from './starlark/target-value.js';
// Tests: the runfiles tree and the test actions of a test rule (README.md).
export { programOf, runfilesTree, runfilesPath, type RunfilesTree } from './rules/runfiles-tree.js';
export { testTargetOf, TEST_TIMEOUTS, type TestSettings, type TestTarget, type TestRun } from './rules/test-runs.js';
export { TEST_SETUP_SCRIPT } from './rules/test-setup-script.js';
