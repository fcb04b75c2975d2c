import type { PlainAttrValue } from '../loading/index.js';

/** A set of targets keyed by their canonical label, in insertion order. */
export type TargetSet<T> = Map<string, T>;

/** An attribute of a rule as query sees it: its type and every value it may take (one per select branch). */
export interface AttributeView {
  readonly type: string;
  readonly values: readonly PlainAttrValue[];
  /** Set when the rule gave the attribute explicitly (else it is the rule class's default). */
  readonly explicit: boolean;
}

/**
 * What the query functions need of a target graph, generic over the target type T (loaded targets
 * here; configured targets could serve a cquery-like use). Every lookup that can fail reports
 * through `fail`, which ends the query or, with keep_going, records a partial result.
 */
export interface QueryEnvironment<T> {
  keyOf(t: T): string;
  /** The target's canonical label as printed (`//pkg:name`, `@repo//pkg:name`). */
  labelOf(t: T): string;
  /** The package key (`//pkg`, `@repo//pkg`). */
  packageOf(t: T): string;
  /** Compares two targets in Bazel's label order. */
  compare(a: T, b: T): number;
  /** The targets a target pattern denotes. */
  resolvePattern(pattern: string, column: number): Iterable<T>;
  /** Direct dependencies, with query's edges: every select branch, implicit ones unless turned off. */
  dependencies(t: T): Iterable<T>;
  /** Every target allrdeps and rbuildfiles search (the universe scope's closure, or the workspace's). */
  universe(): Iterable<T>;
  /** `genrule rule`, `source file`, `generated file`, `package group`. */
  kindOf(t: T): string;
  isRule(t: T): boolean;
  isTestRule(t: T): boolean;
  isTestSuite(t: T): boolean;
  /** An attribute of a rule (given or defaulted), or undefined when the rule has none of that name. */
  attribute(t: T, name: string): AttributeView | undefined;
  /** The targets an attribute's labels name (every select branch). */
  attributeTargets(t: T, name: string): Iterable<T>;
  /** The tests a test_suite with no `tests` stands for: the package's test rules not tagged manual. */
  implicitTests(suite: T): Iterable<T>;
  /** Every target of the packages of `t`. */
  siblings(t: T): Iterable<T>;
  /** The BUILD file target of t's package. */
  buildFile(t: T): T | undefined;
  /** The .bzl files t's package loads, transitively, as source file targets. */
  loadedFiles(t: T): Iterable<T>;
  /** Whether `target` is visible to `from`. */
  isVisible(target: T, from: T): boolean;
  /** A target the query cannot go on with: ends the query, or under keep_going is reported and skipped. */
  fail(message: string): void;
  /** A problem that does not change the result's validity. */
  warn(message: string): void;
}
