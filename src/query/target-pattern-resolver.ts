import type { QueryTarget, TargetLoader } from './target-loader.js';
import { parseTargetPattern, TargetPatternError, type TargetPattern } from './target-pattern.js';

/** One target a list of patterns named; `fromWildcard` when only a wildcard (`//...`, `:all`, `:*`) matched it. */
export interface ResolvedTarget {
  readonly target: QueryTarget;
  readonly fromWildcard: boolean;
}

export interface TargetPatternOptions {
  /** Loads packages and reports their errors (its keep_going decides whether an error ends resolution). */
  readonly targets: TargetLoader;
  /** The working directory's path inside the workspace, for relative patterns. */
  readonly offset?: string;
  /** Skip rules tagged `manual` that only a wildcard matched, as `bazel build` and `bazel test` do. */
  readonly excludeManual?: boolean;
}

/**
 * Resolves a command line's target patterns in order: `-pattern` subtracts what it matches from the
 * targets so far, a named target is kept even when tagged `manual`, and (with `excludeManual`) a rule
 * tagged `manual` that a wildcard matched is skipped. Labels come out in first-seen order.
 */
export function resolveTargetPatterns(patterns: readonly string[], options: TargetPatternOptions): ResolvedTarget[] {
  const chosen = new Map<string, ResolvedTarget>();
  for (const raw of patterns) {
    const negative = raw.startsWith('-');
    const pattern = parseTargetPattern(negative ? raw.slice(1) : raw, options.offset ?? '');
    const wildcard = pattern.kind !== 'single';
    for (const t of resolveTargetPattern(pattern, options.targets)) {
      const key = t.label.toString();
      if (negative) chosen.delete(key);
      else if (!wildcard) chosen.set(key, { target: t, fromWildcard: false });
      else if (!chosen.has(key) && !(options.excludeManual && isManual(t))) chosen.set(key, { target: t, fromWildcard: true });
    }
  }
  return [...chosen.values()];
}

/** The targets one parsed pattern matches (query semantics: `manual` targets included). */
export function resolveTargetPattern(pattern: TargetPattern, targets: TargetLoader): QueryTarget[] {
  const out: QueryTarget[] = [];
  const repoOf = (repo: string) => targets.canonicalRepo(repo);
  switch (pattern.kind) {
    case 'single': {
      const l = pattern.label;
      const t = targets.getTarget(l.inRepository(repoOf(l.repo)));
      if (t) out.push(t);
      return out;
    }
    case 'package': {
      const p = targets.loadPackage(repoOf(pattern.repo), pattern.pkg);
      if (p) for (const t of p.targets.values()) if (pattern.allTargets || t.kind === 'rule') out.push(targets.wrap(p, t));
      return out;
    }
    case 'beneath': {
      const repo = repoOf(pattern.repo);
      const pkgs = targets.loader.repository(repo).packagesUnder(pattern.dir);
      if (pkgs.length === 0) {
        targets.fail(`no targets found beneath '${pattern.dir}'`);
        return out;
      }
      for (const pkg of pkgs) {
        const p = targets.loadPackage(repo, pkg);
        if (p) for (const t of p.targets.values()) if (pattern.allTargets || t.kind === 'rule') out.push(targets.wrap(p, t));
      }
      return out;
    }
  }
}

/** Whether a pattern names more than one target by a wildcard (`...`, `:all`, `:*`, `:all-targets`). */
export function isWildcardPattern(text: string): boolean {
  try {
    return parseTargetPattern(text).kind !== 'single';
  } catch (e) {
    if (e instanceof TargetPatternError) return false;
    throw e;
  }
}

function isManual(t: QueryTarget): boolean {
  if (t.target.kind !== 'rule') return false;
  const tags = t.target.attrs.get('tags');
  return Array.isArray(tags) && tags.includes('manual');
}
