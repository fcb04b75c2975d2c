import type { Position } from '../core/index.js';
import type { AttrValue } from './rules/attribute.js';

/** A rule instance: its class, where it was declared and the attribute values given explicitly. */
export interface RuleTarget {
  readonly kind: 'rule';
  readonly name: string;
  readonly ruleClass: string;
  readonly location: Position;
  /** Explicitly set attributes (name included), in call order; defaults come from the rule class. */
  readonly attrs: Map<string, AttrValue>;
  /** Output files (package-relative names) declared by output attributes. */
  readonly outputs: string[];
  /** Canonical labels of every target the rule depends on (label attributes, select keys, visibility groups). */
  readonly dependencies: string[];
  /** The rule class was defined in Starlark by `rule()`. */
  readonly starlarkDefined?: boolean;
  /** For a Starlark rule: `//pkg:defs.bzl%name`, where analysis finds its implementation. */
  readonly ruleDefinition?: string;
  /** Set when a macro declared the rule: the outermost BUILD-file call (Bazel's generator_*). */
  readonly generator?: GeneratorInfo;
}

/** Bazel's generator_name, generator_function and generator_location (`pkg/BUILD:line`). */
export interface GeneratorInfo {
  readonly name: string;
  readonly function: string;
  readonly location: string;
}

/** A source file of the package: named by a rule's label attribute, exports_files, or the BUILD file. */
export interface SourceFileTarget {
  readonly kind: 'source';
  readonly name: string;
  readonly location: Position;
  /** Set by exports_files(visibility = ...). */
  visibility?: readonly string[];
}

/** A file a rule of this package generates. */
export interface GeneratedFileTarget {
  readonly kind: 'generated';
  readonly name: string;
  readonly location: Position;
  /** Name of the generating rule in the same package. */
  readonly generatingRule: string;
}

export interface PackageGroupTarget {
  readonly kind: 'package_group';
  readonly name: string;
  readonly location: Position;
  readonly packages: readonly string[];
  readonly includes: readonly string[];
}

export type Target = RuleTarget | SourceFileTarget | GeneratedFileTarget | PackageGroupTarget;

/** Bazel's kind string as `query --output=label_kind` prints it. */
export function targetKind(t: Target): string {
  switch (t.kind) {
    case 'rule':
      return `${t.ruleClass} rule`;
    case 'source':
      return 'source file';
    case 'generated':
      return 'generated file';
    case 'package_group':
      return 'package group';
  }
}
