import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { KilnError, type Position } from '../core/index.js';
import { Label, NoSuchPackageError, type Package, type PackageLoader, type Target } from '../loading/index.js';
import { parseQuery, type QueryExpr } from './parser.js';
import { parseTargetPattern, type TargetPattern } from './target-pattern.js';

/** One target of a query result, with the package it belongs to. */
export interface QueryTarget {
  readonly label: Label;
  readonly target: Target;
  readonly pkg: Package;
}

/** The query could not be evaluated (Bazel: `Evaluation of query "..." failed: ...`). */
export class QueryEvaluationError extends KilnError {}

export interface QueryOptions {
  /** Report every broken package and go on with the rest (Bazel's --keep_going). */
  readonly keepGoing?: boolean;
  /** The working directory's path inside the workspace, for relative patterns. */
  readonly offset?: string;
  /** Receives each loading error, once. */
  readonly onError?: (message: string, pos?: Position) => void;
}

/** Evaluates query expressions over packages loaded on demand. */
export class QueryEngine {
  private readonly reported = new Set<string>();
  /** Set when an error was reported and evaluation went on (keep_going). */
  hadErrors = false;

  constructor(
    private readonly loader: PackageLoader,
    private readonly options: QueryOptions = {},
  ) {}

  /** The targets the query denotes, sorted by label. */
  evaluate(query: string): QueryTarget[] {
    const expr = parseQuery(query);
    const result = this.eval(expr);
    return [...result.values()].sort((a, b) => compareLabels(a.label, b.label));
  }

  private eval(e: QueryExpr): Map<string, QueryTarget> {
    if (e.kind === 'pattern') return this.resolvePattern(this.mainRepoAsEmpty(parseTargetPattern(e.text, this.options.offset ?? '')));
    const left = this.eval(e.left);
    const right = this.eval(e.right);
    switch (e.op) {
      case 'union':
        for (const [k, v] of right) left.set(k, v);
        return left;
      case 'except':
        for (const k of right.keys()) left.delete(k);
        return left;
      case 'intersect':
        for (const k of [...left.keys()]) if (!right.has(k)) left.delete(k);
        return left;
    }
  }

  /** Without --keep_going the error ends the query (the caller prints it); with it, it is reported and skipped. */
  private fail(message: string): void {
    if (!this.options.keepGoing) throw new QueryEvaluationError(message);
    this.options.onError?.(message);
    this.hadErrors = true;
  }

  /** Loads a package, reporting its errors once; returns undefined when it cannot be used. */
  private load(repo: string, pkg: string): Package | undefined {
    let p: Package;
    try {
      p = this.loader.loadPackage(repo, pkg);
    } catch (e) {
      if (e instanceof NoSuchPackageError) {
        this.fail(e.message);
        return undefined;
      }
      throw e;
    }
    if (p.errors.length > 0) {
      const id = `${repo}//${pkg}`;
      if (!this.reported.has(id)) {
        this.reported.add(id);
        for (const err of p.errors) this.options.onError?.(err.message, err.pos);
        // Bazel 2.1's lines after a broken package.
        this.options.onError?.(`package contains errors: ${pkg}`);
        if (!this.options.keepGoing) throw new QueryEvaluationError(`error loading package '${pkg}': Package '${pkg}' contains errors`);
        this.hadErrors = true;
      }
    }
    return p;
  }

  private resolvePattern(pattern: TargetPattern): Map<string, QueryTarget> {
    const out = new Map<string, QueryTarget>();
    const addPackage = (p: Package, allTargets: boolean) => {
      for (const t of p.targets.values()) {
        if (!allTargets && t.kind !== 'rule') continue;
        const label = new Label(p.repo, p.pkg, t.name);
        out.set(label.toString(), { label, target: t, pkg: p });
      }
    };
    switch (pattern.kind) {
      case 'single': {
        const l = pattern.label;
        const p = this.load(l.repo, l.pkg);
        if (!p) return out;
        const t = p.targets.get(l.name) ?? this.missingTarget(p, l);
        if (t) out.set(l.toString(), { label: l, target: t, pkg: p });
        return out;
      }
      case 'package': {
        const p = this.load(pattern.repo, pattern.pkg);
        if (p) addPackage(p, pattern.allTargets);
        return out;
      }
      case 'beneath': {
        const ws = this.loader.repository(pattern.repo);
        const pkgs = ws.packagesUnder(pattern.dir);
        if (pkgs.length === 0) {
          this.fail(`no targets found beneath '${pattern.dir}'`);
          return out;
        }
        for (const pkg of pkgs) {
          const p = this.load(pattern.repo, pkg);
          if (p) addPackage(p, pattern.allTargets);
        }
        return out;
      }
    }
  }

  /** `@<main repository name>//...` is the main repository, printed without `@`. */
  private mainRepoAsEmpty(p: TargetPattern): TargetPattern {
    const main = this.loader.workspace.name;
    if (main === '') return p;
    if (p.kind === 'single') return p.label.repo === main ? { ...p, label: new Label('', p.label.pkg, p.label.name) } : p;
    return p.repo === main ? { ...p, repo: '' } : p;
  }

  /** Reports a target the package does not declare, in Bazel's words (with its hints). */
  private missingTarget(p: Package, l: Label): undefined {
    const ws = this.loader.repository(l.repo);
    const crossing = ws.subpackageCrossing(l);
    if (crossing) {
      this.fail(`no such target '${l}': ${crossing}`);
      return undefined;
    }
    const path = join(ws.dirOf(l.pkg), l.name);
    const hint =
      existsSync(path) && statSync(path).isFile()
        ? `; however, a source file of this name exists.  (Perhaps add 'exports_files(["${l.name}"])' to ${p.buildFile}?)`
        : '';
    this.fail(`no such target '${l}': target '${l.name}' not declared in package '${l.pkg}'${hint} defined by ${p.buildFile}`);
    return undefined;
  }
}

/** Bazel's label order: by repository, then package, then name. */
export function compareLabels(a: Label, b: Label): number {
  if (a.repo !== b.repo) return a.repo < b.repo ? -1 : 1;
  if (a.pkg !== b.pkg) return a.pkg < b.pkg ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
