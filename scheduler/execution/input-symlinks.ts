import { digestKey, parseDigest, type reapi } from '../../src/core/index.js';

/**
 * Input symlinks must resolve inside the input root however they chain. Two rules, each sound on its
 * own, so that the check never depends on a symlink's full path (a tree that shares directories by
 * digest can have exponentially many):
 *
 * 1. Canonical targets: every `..` comes before every name (`.` and empty components aside), at most
 *    as many as the symlink's depth. The `..`s climb real directories to one inside the root; the
 *    names after them only descend, or pass through symlinks that obey these rules too.
 * 2. Other targets (a `..` after a name, which REAPI allows: `foo/../bar` is not `bar` when `foo` is a
 *    symlink) are resolved through the tree itself, as Buildbarn resolves paths, from the symlink's
 *    own directory: names descend into the directories the tree holds, symlinks met on the way are
 *    followed (at most MAX_HOPS, so a cycle ends), a `..` climbs back what was descended. Climbing
 *    above the symlink's own directory is refused: what lies there depends on where the directory
 *    is, and a target with leading `..` is only checked by rule 1. A name the tree lacks is a
 *    directory the action could make: later components are counted lexically.
 */
type SymlinkCheck = 'inside' | 'resolve';

/** Links followed while resolving one target, as Linux's MAXSYMLINKS. */
const MAX_HOPS = 40;
/** Path components walked in all while resolving one input root's non-canonical targets. */
const MAX_STEPS = 1_000_000;

/** Rule 1, or 'resolve' when only rule 2 can tell; throws when the target leaves the root. */
export function checkSymlinkTarget(target: string, depth: number, refuse: (why: string) => Error): SymlinkCheck {
  if (target === '' || target.startsWith('/')) throw refuse('escapes the input root (targets must be relative paths)');
  if (target.includes('\0')) throw refuse('contains a NUL character');
  let up = 0;
  let named = false;
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    if (part !== '..') named = true;
    else if (named) return up === 0 ? 'resolve' : failWith(refuse, "has '..' both before and after a name; canonicalise the target");
    else if (++up > depth) throw refuse('escapes the input root');
  }
  return 'inside';
}

function failWith(refuse: (why: string) => Error, why: string): never {
  throw refuse(why);
}

/** Rule 2 for the symlinks of one input root; `directories` holds every Directory of the tree by digest key. */
export class SymlinkResolver {
  private steps = 0;
  private readonly entries = new Map<
    reapi.Directory,
    Map<string, { kind: 'directory'; digest: string } | { kind: 'symlink'; target: string } | { kind: 'file' }>
  >();

  constructor(private readonly directories: ReadonlyMap<string, reapi.Directory>) {}

  /** Throws (through `refuse`) unless `target`, resolved from `directory`, stays at or below it. */
  check(directory: reapi.Directory, target: string, refuse: (why: string) => Error): void {
    const hops = { count: 0 };
    if (!this.walk([directory], target, hops, refuse)) {
      throw refuse("climbs above its own directory through '..' after a name (resolved through the input tree)");
    }
  }

  /** Resolves `target` onto `stack` (directories from the start, null where the tree has none); false if it climbs above the start. */
  private walk(stack: (reapi.Directory | null)[], target: string, hops: { count: number }, refuse: (why: string) => Error): boolean {
    for (const part of target.split('/')) {
      if (++this.steps > MAX_STEPS) throw refuse(`needs more than ${MAX_STEPS} steps to check with the others of this input root`);
      if (part === '' || part === '.') continue;
      if (part === '..') {
        if (stack.length === 1) return false;
        stack.pop();
        continue;
      }
      const current = stack[stack.length - 1]!;
      const entry = current && this.entriesOf(current).get(part);
      if (entry?.kind === 'directory') stack.push(this.directories.get(entry.digest) ?? null);
      else if (entry?.kind === 'symlink') {
        if (++hops.count > MAX_HOPS) throw refuse(`goes through more than ${MAX_HOPS} symlinks (a cycle?)`);
        if (entry.target.startsWith('/')) return false;
        if (!this.walk(stack, entry.target, hops, refuse)) return false;
      } else stack.push(null); // a file (ENOTDIR at run time) or a name the action may make
    }
    return true;
  }

  private entriesOf(directory: reapi.Directory) {
    let entries = this.entries.get(directory);
    if (!entries) {
      entries = new Map();
      for (const d of directory.directories) entries.set(d.name, { kind: 'directory', digest: digestKey(parseDigest(d.digest, 'DirectoryNode.digest')) });
      for (const s of directory.symlinks) entries.set(s.name, { kind: 'symlink', target: s.target });
      for (const f of directory.files) entries.set(f.name, { kind: 'file' });
      this.entries.set(directory, entries);
    }
    return entries;
  }
}
