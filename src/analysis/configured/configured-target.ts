import type { Position } from '../../core/index.js';
import type { BzlModule, Provider, ProviderInstance, StarlarkRuleFunction } from '../../loading/index.js';
import type { Action, Artifact } from '../../actions/index.js';
import type { BuildConfiguration } from '../config/build-configuration.js';
import type { ConfigMatch } from '../config/config-matching.js';

/**
 * A target loaded and ready for analysis. Loading's targets map onto this shape one to one
 * (its `Target` plus the canonical label), so analysis does not depend on how packages are stored.
 */
export type AnalysisTarget = RuleAnalysisTarget | SourceAnalysisTarget | GeneratedAnalysisTarget | PackageGroupAnalysisTarget;

interface TargetBase {
  /** Canonical label, `//pkg:name` or `@repo//pkg:name`. */
  readonly label: string;
  readonly location: Position;
}

export interface RuleAnalysisTarget extends TargetBase {
  readonly kind: 'rule';
  readonly ruleClass: string;
  /** Attributes set explicitly; select()s unresolved (either select form, see config/select.ts). */
  readonly attrs: ReadonlyMap<string, unknown>;
  /** Output files, package-relative, in declaration order. */
  readonly outputs: readonly string[];
  /** For a Starlark rule: `//pkg:defs.bzl%name`, which {@link TargetGraph.starlarkRule} resolves. */
  readonly ruleDefinition?: string;
}

export interface SourceAnalysisTarget extends TargetBase {
  readonly kind: 'source';
  /** From exports_files(visibility = ...); undefined means public (Bazel 2.1's default for source files). */
  readonly visibility?: readonly string[];
}

export interface GeneratedAnalysisTarget extends TargetBase {
  readonly kind: 'generated';
  /** Label of the rule that generates it. */
  readonly generatingRule: string;
}

export interface PackageGroupAnalysisTarget extends TargetBase {
  readonly kind: 'package_group';
  /** Package specifications: `//foo`, `//foo/...`, `//...`, `-//foo` excludes. */
  readonly packages: readonly string[];
  readonly includes: readonly string[];
}

/** The loaded world analysis reads. */
export interface TargetGraph {
  target(label: string): AnalysisTarget | undefined;
  /** `package(default_visibility = ...)` of the package of target `label`, if set. */
  defaultVisibility?(label: string): readonly string[] | undefined;
  /** `package(default_testonly = ...)` of the package of target `label`. */
  defaultTestonly?(label: string): boolean;
  /** The Starlark rule (its class and implementation) a rule target's `ruleDefinition` names. */
  starlarkRule?(key: string): StarlarkRuleFunction | undefined;
  /** The evaluated module of a .bzl or .scl file (evaluating it once); throws its errors. */
  bzlModule?(label: string): BzlModule;
  /** The evaluated module whose file has this display path (where a function was defined). */
  bzlModuleAt?(displayPath: string): BzlModule | undefined;
  /** A provider exported by a .bzl file, by `//pkg:defs.bzl%Name`. */
  starlarkProvider?(key: string): Provider | undefined;
  /** `register_toolchains` / `register_execution_platforms` of MODULE.bazel and WORKSPACE, as written. */
  registrations?(): { readonly toolchains: readonly string[]; readonly executionPlatforms: readonly string[] };
  /**
   * The rule targets a registration's target pattern names, in package then declaration order:
   * `//pkg:all` (`:*`, `:all-targets`), `//pkg/...` (`//pkg/...:all`), or one label (`explicit`).
   */
  rulesMatching?(pattern: string): { readonly labels: readonly string[]; readonly explicit: boolean };
}

/** Files and their runfiles-relative path. */
export interface FileEntry {
  readonly artifact: Artifact;
  readonly rootPath: string;
  /** The source file's own label (a File's `owner`), when the entry is a source target. */
  readonly label?: string;
}

/**
 * The result of analysing one target in one configuration: its providers (files to build,
 * runfiles, output groups, config matching, Make variables) and the actions it registered.
 */
export interface ConfiguredTarget {
  readonly label: string;
  readonly target: AnalysisTarget;
  readonly config: BuildConfiguration;
  /** DefaultInfo files, in order, without duplicates. */
  readonly files: readonly FileEntry[];
  /** Runfiles: files needed at run time (data). */
  readonly runfiles: readonly FileEntry[];
  readonly outputGroups: ReadonlyMap<string, readonly FileEntry[]>;
  /** Present for config_setting. */
  readonly configMatch?: ConfigMatch;
  /** TemplateVariableInfo: Make variables for rules that list this target in `toolchains`. */
  readonly templateVariables?: ReadonlyMap<string, string>;
  /** Its own visibility (for an alias: the alias's, not the actual's). */
  readonly visibility: readonly string[];
  /** For an alias: the actual's testonly. */
  readonly testonly: boolean;
  /** Rule class, or the kind for non-rules; for an alias: the actual's. */
  readonly kindName: string;
  readonly actions: readonly Action[];
  /** An executable or test rule's `args` and `env` after `$(location)` and Make variable expansion. */
  readonly runEnvironment?: RunEnvironment;
  /** The file `bazel run` runs: an executable rule's output. */
  readonly executable?: FileEntry;
  /** A C++ rule's CcInfo (what its dependents compile and link with). */
  readonly cc?: CcInfo;
  /** Providers a Starlark rule returned, by provider key (DefaultInfo and OutputGroupInfo included). */
  readonly providers?: ReadonlyMap<string, ProviderInstance>;
  /**
   * Set when the target is incompatible with the configuration's platform (target_compatible_with,
   * or a dependency that is): the dependency chain, from this target down to the unmet constraint.
   */
  readonly incompatible?: readonly string[];
}

/**
 * What a C++ library gives its dependents, transitively (Bazel's CcInfo: compilation and linking
 * contexts): headers to read, include roots (`-iquote`, `-isystem`), defines, archives to link in
 * link order, and linkopts.
 */
export interface CcInfo {
  readonly headers: readonly Artifact[];
  readonly quoteIncludes: readonly string[];
  readonly systemIncludes: readonly string[];
  readonly defines: readonly string[];
  readonly libraries: readonly Artifact[];
  readonly linkopts: readonly string[];
}

/** The arguments and environment an executable or test rule gives its program (Bazel's RunEnvironmentInfo). */
export interface RunEnvironment {
  readonly args: readonly string[];
  readonly env: readonly (readonly [string, string])[];
  /** RunEnvironmentInfo's `inherited_environment`: names whose values come from the client's environment. */
  readonly inherited?: readonly string[];
  /** A test rule's `testing.ExecutionInfo` requirements (`requires-network`, `local`...) for its test action. */
  readonly executionRequirements?: readonly string[];
}
