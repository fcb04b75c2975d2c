import { KilnError } from '../core/index.js';
import { EntryKind, type DirectoryLister } from './directory-lister.js';

/** A bad glob pattern or an empty result with allow_empty = False. */
export class GlobError extends KilnError {}

export interface GlobOptions {
  readonly include: readonly string[];
  readonly exclude?: readonly string[];
  /** Bazel's default is 1: directories are not results. */
  readonly excludeDirectories?: boolean;
  /** Bazel 2.1's default is True. */
  readonly allowEmpty?: boolean;
}

/** What a glob needs from the workspace: listings, and which directories are subpackages. */
export interface GlobContext {
  readonly lister: DirectoryLister;
  /** Absolute path of the package directory. */
  readonly packageDir: string;
  /** Called with every directory (package-relative, '' = package) whose listing the glob read. */
  readonly onListing?: (relDir: string) => void;
}

/** Bazel's UnixGlob.checkPatternForError wording; null when the pattern is valid. */
export function checkGlobPattern(pattern: string): string | null {
  if (pattern === '') return 'pattern cannot be empty';
  if (pattern.charCodeAt(0) === 47) return 'pattern cannot be absolute';
  for (const seg of pattern.split('/')) {
    if (seg === '') return 'empty segment not permitted';
    if (seg === '.' || seg === '..') return `segment '${seg}' not permitted`;
    if (seg !== '**' && seg.includes('**')) return 'recursive wildcard must be its own segment';
  }
  return null;
}

type SegmentMatcher = string | RegExp | typeof RECURSIVE;
const RECURSIVE = Symbol('**');
const matcherCache = new Map<string, SegmentMatcher>();

function segmentMatcher(seg: string): SegmentMatcher {
  if (seg === '**') return RECURSIVE;
  let m = matcherCache.get(seg);
  if (m === undefined) {
    if (!seg.includes('*') && !seg.includes('?')) m = seg;
    else {
      let src = '^';
      for (const ch of seg) src += ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
      m = new RegExp(`${src}$`, 's');
    }
    matcherCache.set(seg, m);
  }
  return m;
}

function segmentMatches(m: SegmentMatcher, name: string): boolean {
  return typeof m === 'string' ? m === name : (m as RegExp).test(name);
}

/**
 * Evaluates one pattern against the package's tree. Subpackages (directories holding BUILD or
 * BUILD.bazel) are neither entered nor returned; symlinks count as what they point to.
 */
function expand(ctx: GlobContext, pattern: string, excludeDirectories: boolean, out: Set<string>): void {
  const segs = pattern.split('/').map(segmentMatcher);
  const listed = new Set<string>();
  const list = (rel: string) => {
    if (!listed.has(rel)) {
      listed.add(rel);
      ctx.onListing?.(rel);
    }
    return ctx.lister.list(rel === '' ? ctx.packageDir : `${ctx.packageDir}/${rel}`);
  };
  const isSubpackage = (rel: string): boolean => {
    const abs = `${ctx.packageDir}/${rel}`;
    return ctx.lister.hasFile(abs, 'BUILD.bazel') || ctx.lister.hasFile(abs, 'BUILD');
  };
  // Visited (dir, segment index) pairs: `**/**` and symlink loops stay finite.
  const seen = new Set<string>();
  const visit = (rel: string, i: number): void => {
    const key = `${i}\u0000${rel}`;
    if (seen.has(key)) return;
    seen.add(key);
    const m = segs[i]!;
    const last = i === segs.length - 1;
    if (m === RECURSIVE) {
      // Zero segments: continue with the next pattern segment in this directory.
      if (last) {
        if (rel !== '' && !excludeDirectories) out.add(rel);
      } else visit(rel, i + 1);
      const entries = list(rel);
      if (!entries) return;
      for (const e of entries) {
        const child = rel === '' ? e.name : `${rel}/${e.name}`;
        if (e.kind === EntryKind.Directory) {
          if (isSubpackage(child)) continue;
          if (e.symlink && ctx.lister.isSymlinkCycle(rel === '' ? ctx.packageDir : `${ctx.packageDir}/${rel}`, e.name)) continue;
          visit(child, i);
        } else if (last) out.add(child);
      }
      return;
    }
    const entries = list(rel);
    if (!entries) return;
    for (const e of entries) {
      if (!segmentMatches(m, e.name)) continue;
      const child = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.kind === EntryKind.Directory) {
        if (isSubpackage(child)) continue;
        if (last) {
          if (!excludeDirectories) out.add(child);
        } else visit(child, i + 1);
      } else if (last) out.add(child);
    }
  };
  visit('', 0);
}

/** Bazel's glob(): sorted, deduplicated, package-relative paths. */
export function glob(ctx: GlobContext, options: GlobOptions): string[] {
  const excludeDirectories = options.excludeDirectories ?? true;
  for (const p of [...options.include, ...(options.exclude ?? [])]) {
    const err = checkGlobPattern(p);
    if (err) throw new GlobError(`glob pattern '${p}': ${err}`);
  }
  const matched = new Set<string>();
  for (const p of options.include) {
    const own = options.allowEmpty === false ? new Set<string>() : matched;
    expand(ctx, p, excludeDirectories, own);
    if (own !== matched) {
      if (own.size === 0) {
        throw new GlobError(
          `glob pattern '${p}' didn't match anything, but allow_empty is set to False (the default value of allow_empty can be set with --incompatible_disallow_empty_glob).`,
        );
      }
      for (const x of own) matched.add(x);
    }
  }
  if (options.exclude && options.exclude.length > 0 && matched.size > 0) {
    const excluders = options.exclude.map((p) => p.split('/').map(segmentMatcher));
    for (const path of matched) {
      const parts = path.split('/');
      if (excluders.some((segs) => matchPath(segs, 0, parts, 0))) matched.delete(path);
    }
    if (options.allowEmpty === false && matched.size === 0) {
      throw new GlobError(
        'all files in the glob have been excluded, but allow_empty is set to False (the default value of allow_empty can be set with --incompatible_disallow_empty_glob).',
      );
    }
  }
  const result = [...matched];
  result.sort();
  return result;
}

/** Does the path (as segments) match the pattern segments? `**` matches zero or more segments. */
function matchPath(segs: readonly SegmentMatcher[], i: number, parts: readonly string[], j: number): boolean {
  for (;;) {
    if (i === segs.length) return j === parts.length;
    const m = segs[i]!;
    if (m === RECURSIVE) {
      for (let k = j; k <= parts.length; k++) if (matchPath(segs, i + 1, parts, k)) return true;
      return false;
    }
    if (j === parts.length || !segmentMatches(m, parts[j]!)) return false;
    i++;
    j++;
  }
}

/** Whole-path test of one glob pattern (used by exclude and by tests). */
export function globPatternMatches(pattern: string, path: string): boolean {
  return matchPath(pattern.split('/').map(segmentMatcher), 0, path.split('/'), 0);
}
