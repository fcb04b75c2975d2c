import { KilnError } from '../core/index.js';
import { dependencyClosure } from './graph-walk.js';
import type { PackageQueryEnvironment } from './package-query-environment.js';
import type { AttributeView, QueryEnvironment, TargetSet } from './query-environment.js';
import type { QueryTarget } from './target-loader.js';

/** A strict genquery's query reached a target outside the transitive closure of its scope. */
export class ScopeViolationError extends KilnError {}

/**
 * The environment of a genquery: the package graph limited to the transitive closure of `scope`
 * (plus the BUILD files of its packages and the .bzl files they load, for buildfiles and loadfiles).
 * A target outside it is a violation: with `strict` the query fails (ScopeViolationError), else it
 * is reported through `warn` and left out, and the rest of the query goes on.
 */
export class ScopedQueryEnvironment implements QueryEnvironment<QueryTarget> {
  private readonly closure: TargetSet<QueryTarget>;
  /** The packages of the closure's targets. */
  private readonly packages: ReadonlySet<string>;
  private readonly reported = new Set<string>();

  constructor(
    private readonly inner: PackageQueryEnvironment,
    scope: readonly QueryTarget[],
    private readonly strict: boolean,
  ) {
    this.closure = dependencyClosure(inner, scope);
    this.packages = new Set([...this.closure.values()].map((t) => inner.packageOf(t)));
  }

  /** The targets of the scope's transitive closure. */
  get scopeSize(): number {
    return this.closure.size;
  }

  keyOf(t: QueryTarget): string {
    return this.inner.keyOf(t);
  }

  labelOf(t: QueryTarget): string {
    return this.inner.labelOf(t);
  }

  packageOf(t: QueryTarget): string {
    return this.inner.packageOf(t);
  }

  compare(a: QueryTarget, b: QueryTarget): number {
    return this.inner.compare(a, b);
  }

  resolvePattern(pattern: string, column: number): QueryTarget[] {
    return this.within(this.inner.resolvePattern(pattern, column));
  }

  dependencies(t: QueryTarget): QueryTarget[] {
    return this.within(this.inner.dependencies(t));
  }

  universe(): QueryTarget[] {
    return [...this.closure.values()];
  }

  kindOf(t: QueryTarget): string {
    return this.inner.kindOf(t);
  }

  isRule(t: QueryTarget): boolean {
    return this.inner.isRule(t);
  }

  isTestRule(t: QueryTarget): boolean {
    return this.inner.isTestRule(t);
  }

  isTestSuite(t: QueryTarget): boolean {
    return this.inner.isTestSuite(t);
  }

  attribute(t: QueryTarget, name: string): AttributeView | undefined {
    return this.inner.attribute(t, name);
  }

  attributeTargets(t: QueryTarget, name: string): QueryTarget[] {
    return this.within(this.inner.attributeTargets(t, name));
  }

  implicitTests(suite: QueryTarget): QueryTarget[] {
    return this.within(this.inner.implicitTests(suite));
  }

  siblings(t: QueryTarget): QueryTarget[] {
    return this.within(this.inner.siblings(t));
  }

  // The files that define a package of the closure (its BUILD file and the .bzl files it loads) are
  // in scope, as in Bazel's genquery: its query environment finds them through the package, never
  // through the scope's target filter. A loaded .bzl file's BUILD file only when that package is
  // one of the closure's (Bazel's GenQueryPackageProvider knows no other package).
  buildFile(t: QueryTarget): QueryTarget | undefined {
    return this.packages.has(this.packageOf(t)) ? this.inner.buildFile(t) : undefined;
  }

  loadedFiles(t: QueryTarget): QueryTarget[] {
    return this.inner.loadedFiles(t);
  }

  isVisible(target: QueryTarget, from: QueryTarget): boolean {
    return this.inner.isVisible(target, from);
  }

  fail(message: string): void {
    this.inner.fail(message);
  }

  warn(message: string): void {
    this.inner.warn(message);
  }

  loadsOf(t: QueryTarget): string[] {
    return this.inner.loadsOf(t);
  }

  resultSuccessors(result: readonly QueryTarget[]): (t: QueryTarget) => readonly QueryTarget[] {
    return this.inner.resultSuccessors(result);
  }

  /** The targets inside the scope's closure; a strict query fails at the first one outside it. */
  private within(targets: readonly QueryTarget[]): QueryTarget[] {
    const out: QueryTarget[] = [];
    for (const t of targets) {
      const key = this.keyOf(t);
      if (this.closure.has(key)) {
        out.push(t);
        continue;
      }
      const message = `target '${key}' is not within the scope of the query (the transitive closure of scope)`;
      if (this.strict) throw new ScopeViolationError(message);
      if (!this.reported.has(key)) {
        this.reported.add(key);
        this.warn(`${message}; skipped`);
      }
    }
    return out;
  }
}
