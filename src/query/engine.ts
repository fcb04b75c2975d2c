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
    const result = this.eval(expr, query);
    return [...result.values()].sort((a, b) => compareLabels(a.label, b.label));
  }

  private eval(e: QueryExpr, query: string): Map<string, QueryTarget> {
    if (e.kind === 'pattern') return this.resolvePattern(parseTargetPattern(e.text, this.options.offset ?? ''), query);
    const left = this.eval(e.left, query);
    const right = this.eval(e.right, query);
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

  private fail(message: string, query: string): void {
    this.options.onError?.(message);
    if (!this.options.keepGoing) throw new QueryEvaluationError(`Evaluation of query "${query}" failed: ${message}`);
    this.hadErrors = true;
  }

  /** Loads a package, reporting its errors once; returns undefined when it cannot be used. */
  private load(repo: string, pkg: string, query: string): Package | undefined {
    let p: Package;
    try {
      p = this.loader.loadPackage(repo, pkg);
    } catch (e) {
      if (e instanceof NoSuchPackageError) {
        this.fail(e.message, query);
        return undefined;
      }
      throw e;
    }
    if (p.errors.length > 0) {
      const id = `${repo}//${pkg}`;
      if (!this.reported.has(id)) {
        this.reported.add(id);
        for (const err of p.errors) this.options.onError?.(err.message, err.pos);
      }
      this.fail(`errors were encountered while loading package '${pkg}' (Package '${pkg}' contains errors)`, query);
    }
    return p;
  }

  private resolvePattern(pattern: TargetPattern, query: string): Map<string, QueryTarget> {
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
        const p = this.load(l.repo, l.pkg, query);
        if (!p) return out;
        const t = p.targets.get(l.name) ?? this.sourceFileOnDisk(p, l, query);
        if (t) out.set(l.toString(), { label: l, target: t, pkg: p });
        return out;
      }
      case 'package': {
        const p = this.load(pattern.repo, pattern.pkg, query);
        if (p) addPackage(p, pattern.allTargets);
        return out;
      }
      case 'beneath': {
        const ws = this.loader.repository(pattern.repo);
        const pkgs = ws.packagesUnder(pattern.dir);
        if (pkgs.length === 0) {
          this.fail(`no targets found beneath '${pattern.dir}'`, query);
          return out;
        }
        for (const pkg of pkgs) {
          const p = this.load(pattern.repo, pkg, query);
          if (p) addPackage(p, pattern.allTargets);
        }
        return out;
      }
    }
  }

  /** Bazel treats an existing file of the package as a source-file target even when no rule names it. */
  private sourceFileOnDisk(p: Package, l: Label, query: string): Target | undefined {
    const ws = this.loader.repository(l.repo);
    const crossing = ws.subpackageCrossing(l);
    if (crossing) {
      this.fail(`no such target '${l}': ${crossing}`, query);
      return undefined;
    }
    const path = join(ws.dirOf(l.pkg), l.name);
    if (existsSync(path) && statSync(path).isFile()) {
      return { kind: 'source', name: l.name, location: { file: this.loader.displayPath(l.repo, l.pkg === '' ? l.name : `${l.pkg}/${l.name}`), line: 1, col: 1 } };
    }
    this.fail(`no such target '${l}': target '${l.name}' not declared in package '${l.pkg}' defined by ${p.buildFile}`, query);
    return undefined;
  }
}

/** Bazel's label order: by repository, then package, then name. */
export function compareLabels(a: Label, b: Label): number {
  if (a.repo !== b.repo) return a.repo < b.repo ? -1 : 1;
  if (a.pkg !== b.pkg) return a.pkg < b.pkg ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
