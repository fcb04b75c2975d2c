import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { KilnError, type Position } from '../core/index.js';
import { Label, MAIN_REPO, NoSuchPackageError, type Package, type PackageLoader, type Target } from '../loading/index.js';

/** One loaded target with the package it belongs to: the target type of the package graph. */
export interface QueryTarget {
  readonly label: Label;
  readonly target: Target;
  readonly pkg: Package;
}

/** The query could not be evaluated (Bazel: `Evaluation of query "..." failed: ...`). */
export class QueryEvaluationError extends KilnError {}

export interface TargetLoaderOptions {
  /** Report every broken package or missing target and go on with the rest (Bazel's --keep_going). */
  readonly keepGoing?: boolean;
  /** Receives each loading error, once. */
  readonly onError?: (message: string, pos?: Position) => void;
  /** Receives warnings (a non-strict genquery leaving its scope); onError when not given. */
  readonly onWarning?: (message: string) => void;
}

/**
 * Packages and targets for the query layer: loads through the PackageLoader, reports each broken
 * package once, and either stops (the error ends the query) or, with keep_going, records that the
 * result is partial and goes on.
 */
export class TargetLoader {
  private readonly reported = new Set<string>();
  /** By package object (the loader gives one per package and run), then by target name. */
  private readonly targets = new Map<Package, Map<string, QueryTarget>>();
  /**
   * Targets found by getTarget, by the label object asked for (Label.parse interns labels): an edge
   * followed again costs one lookup. Only found targets: a failure is reported on every request.
   */
  private readonly byLabel = new Map<Label, QueryTarget>();
  /** Set when an error was reported and evaluation went on (keep_going). */
  hadErrors = false;

  constructor(
    readonly loader: PackageLoader,
    private readonly options: TargetLoaderOptions = {},
  ) {}

  get keepGoing(): boolean {
    return this.options.keepGoing ?? false;
  }

  /** Without --keep_going the error ends the query (the caller prints it); with it, it is reported and skipped. */
  fail(message: string, pos?: Position): void {
    if (!this.keepGoing) throw new QueryEvaluationError(message, pos);
    this.options.onError?.(message, pos);
    this.hadErrors = true;
  }

  /** Reports a warning-level problem without failing (strict=False genquery, cycles under keep_going). */
  report(message: string, pos?: Position): void {
    if (this.options.onWarning) this.options.onWarning(message);
    else this.options.onError?.(message, pos);
  }

  /** Loads a package, reporting its errors once; undefined when it cannot be used. */
  loadPackage(repo: string, pkg: string): Package | undefined {
    let p: Package;
    try {
      p = this.loader.loadPackage(this.canonicalRepo(repo), pkg);
    } catch (e) {
      if (e instanceof NoSuchPackageError) {
        this.fail(e.message);
        return undefined;
      }
      throw e;
    }
    return this.reportErrors(repo, pkg, p);
  }

  /** A loaded package, its errors reported the first time (ending the query without keep_going). */
  private reportErrors(repo: string, pkg: string, p: Package): Package {
    if (p.errors.length > 0) {
      const id = `${repo}//${pkg}`;
      if (!this.reported.has(id)) {
        this.reported.add(id);
        for (const err of p.errors) this.options.onError?.(err.message, err.pos);
        // Bazel 2.1's lines after a broken package.
        this.options.onError?.(`package contains errors: ${pkg}`);
        if (!this.keepGoing) throw new QueryEvaluationError(`error loading package '${pkg}': Package '${pkg}' contains errors`);
        this.hadErrors = true;
      }
    }
    return p;
  }

  /** `@<main repository name>` is the main repository, printed without `@`. */
  canonicalRepo(repo: string): string {
    return repo !== '' && repo === this.loader.workspace.name ? '' : repo;
  }

  /**
   * The QueryTarget of a package's target, one object per label so sets can compare by identity.
   * `label`, when the caller has it, is the target's label (saves making and checking another).
   */
  wrap(p: Package, t: Target, label?: Label): QueryTarget {
    let byName = this.targets.get(p);
    if (byName === undefined) {
      byName = new Map();
      this.targets.set(p, byName);
    }
    let qt = byName.get(t.name);
    if (!qt) {
      qt = { label: label ?? Label.inPackage(p, t.name), target: t, pkg: p };
      byName.set(t.name, qt);
    }
    return qt;
  }

  /**
   * The target a label names; a missing package or target is reported (Bazel's words and hints,
   * with the target whose attribute named it when there is one).
   */
  getTarget(label: Label, referencedBy?: string): QueryTarget | undefined {
    const found = this.byLabel.get(label);
    if (found !== undefined) return found;
    const l = label.repo !== '' && label.repo === this.loader.workspace.name ? label.inRepository(MAIN_REPO) : label;
    const suffix = () => (referencedBy === undefined ? '' : ` and referenced by '${referencedBy}'`);
    let p: Package | undefined;
    if (referencedBy === undefined) p = this.loadPackage(l.repo, l.pkg);
    else {
      try {
        p = this.reportErrors(l.repo, l.pkg, this.loader.loadPackage(l.repo, l.pkg));
      } catch (e) {
        if (!(e instanceof NoSuchPackageError)) throw e;
        this.fail(`${e.message}${suffix()}`);
        return undefined;
      }
    }
    if (!p) return undefined;
    const t = p.targets.get(l.name);
    if (t) {
      const qt = this.wrap(p, t, l);
      this.byLabel.set(label, qt);
      return qt;
    }
    this.missingTarget(p, l, suffix());
    return undefined;
  }

  /** Like getTarget, but undefined without a report when the target does not exist. */
  peekTarget(label: Label): QueryTarget | undefined {
    const l = label.repo !== '' && label.repo === this.loader.workspace.name ? label.inRepository(MAIN_REPO) : label;
    let p: Package;
    try {
      p = this.loader.loadPackage(l.repo, l.pkg);
    } catch (e) {
      if (e instanceof NoSuchPackageError) return undefined;
      throw e;
    }
    const t = p.targets.get(l.name);
    return t ? this.wrap(p, t) : undefined;
  }

  private missingTarget(p: Package, l: Label, suffix = ''): void {
    const ws = this.loader.repository(l.repo);
    const crossing = ws.subpackageCrossing(l);
    if (crossing) {
      this.fail(`no such target '${l}': ${crossing}${suffix}`);
      return;
    }
    const path = join(ws.dirOf(l.pkg), l.name);
    const hint =
      existsSync(path) && statSync(path).isFile()
        ? `; however, a source file of this name exists.  (Perhaps add 'exports_files(["${l.name}"])' to ${p.buildFile}?)`
        : '';
    this.fail(`no such target '${l}': target '${l.name}' not declared in package '${l.pkg}'${hint} defined by ${p.buildFile}${suffix}`);
  }
}

/** Bazel's label order: by repository, then package, then name. */
export function compareLabels(a: Label, b: Label): number {
  if (a.repo !== b.repo) return a.repo < b.repo ? -1 : 1;
  if (a.pkg !== b.pkg) return a.pkg < b.pkg ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
