import type { Position } from '../core/index.js';
import type { PackageLoader } from '../loading/index.js';
import { parseQuery, type QueryExpr } from './parser.js';
import { compareLabels, TargetLoader, type QueryTarget } from './target-loader.js';
import { resolveTargetPattern } from './target-pattern-resolver.js';
import { parseTargetPattern } from './target-pattern.js';

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
  private readonly targets: TargetLoader;

  constructor(
    loader: PackageLoader,
    private readonly options: QueryOptions = {},
  ) {
    this.targets = new TargetLoader(loader, options);
  }

  /** Set when an error was reported and evaluation went on (keep_going). */
  get hadErrors(): boolean {
    return this.targets.hadErrors;
  }

  /** The targets the query denotes, sorted by label. */
  evaluate(query: string): QueryTarget[] {
    const expr = parseQuery(query);
    const result = this.eval(expr);
    return [...result.values()].sort((a, b) => compareLabels(a.label, b.label));
  }

  private eval(e: QueryExpr): Map<string, QueryTarget> {
    if (e.kind === 'pattern') {
      const out = new Map<string, QueryTarget>();
      for (const t of resolveTargetPattern(parseTargetPattern(e.text, this.options.offset ?? ''), this.targets)) out.set(t.label.toString(), t);
      return out;
    }
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
}
