import type { Position } from '../core/index.js';
import type { PackageLoader } from '../loading/index.js';
import { PackageQueryEnvironment } from './package-query-environment.js';
import { parseQuery } from './parser.js';
import { evaluateQuery } from './query-evaluator.js';
import { TargetLoader, type QueryTarget } from './target-loader.js';

export interface QueryOptions {
  /** Report every broken package and go on with the rest (Bazel's --keep_going). */
  readonly keepGoing?: boolean;
  /** The working directory's path inside the workspace, for relative patterns. */
  readonly offset?: string;
  /** Leave out dependencies from attribute defaults (Bazel's --noimplicit_deps). */
  readonly noImplicitDeps?: boolean;
  /** Leave out dependencies only tool attributes give (Bazel's --notool_deps). */
  readonly noToolDeps?: boolean;
  /** The universe of allrdeps and rbuildfiles (Bazel's --universe_scope); `//...` when absent. */
  readonly universeScope?: readonly string[];
  /** Receives each loading error, once. */
  readonly onError?: (message: string, pos?: Position) => void;
}

/** Evaluates query expressions over the packages of a workspace, loaded on demand. */
export class QueryEngine {
  readonly targets: TargetLoader;
  readonly environment: PackageQueryEnvironment;

  constructor(loader: PackageLoader, options: QueryOptions = {}) {
    this.targets = new TargetLoader(loader, options);
    this.environment = new PackageQueryEnvironment(this.targets, options);
  }

  /** Set when an error was reported and evaluation went on (keep_going). */
  get hadErrors(): boolean {
    return this.targets.hadErrors;
  }

  /** The targets the query denotes, in evaluation order (see formatQueryResult for output order). */
  evaluate(query: string): QueryTarget[] {
    return [...evaluateQuery(parseQuery(query), this.environment).values()];
  }
}
