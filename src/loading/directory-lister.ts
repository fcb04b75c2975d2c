import { readdirSync, realpathSync, statSync } from 'node:fs';

/** What a directory entry is, after following symlinks as Bazel's glob does. */
export const enum EntryKind {
  File = 0,
  Directory = 1,
}

export interface DirEntry {
  readonly name: string;
  readonly kind: EntryKind;
  /** The entry is a symlink (its kind is that of its target). */
  readonly symlink: boolean;
}

/**
 * Lists directories once per run and remembers every listing, so loading can key its caches by the
 * exact listings a package's globs read. Entries are sorted by name; dangling or looping symlinks and
 * special files are left out (Bazel's glob ignores them too).
 */
export class DirectoryLister {
  private readonly listings = new Map<string, readonly DirEntry[] | null>();
  /** Directories listed in this run that hold a symlink (or a special file) among their entries. */
  private readonly withLinks = new Set<string>();
  /** Told about every directory read (cached or not), so a computation can record its inputs. */
  observer: ((absDir: string) => void) | undefined = undefined;

  /** Per directory, entries that are not part of the source tree (see hideEntries). */
  private readonly hidden = new Map<string, (entry: DirEntry) => boolean>();

  /**
   * Leaves the entries of `absDir` that `isHidden` picks out of every listing: globs, package
   * lookups and content keys never see them (the workspace's convenience symlinks into the output
   * base, which a build creates and which are no source).
   */
  hideEntries(absDir: string, isHidden: (entry: DirEntry) => boolean): void {
    this.hidden.set(absDir, isHidden);
    this.listings.delete(absDir);
  }

  /** Entries of `absDir`, or null when it is not a readable directory. */
  list(absDir: string): readonly DirEntry[] | null {
    this.observer?.(absDir);
    let entries = this.listings.get(absDir);
    if (entries === undefined) {
      entries = readListing(absDir, () => this.withLinks.add(absDir));
      const isHidden = this.hidden.get(absDir);
      if (entries && isHidden) entries = entries.filter((e) => !isHidden(e));
      this.listings.set(absDir, entries);
    }
    return entries;
  }

  /** Has `absDir` an entry `name` that is a file? (Used for BUILD / BUILD.bazel lookups.) */
  hasFile(absDir: string, name: string): boolean {
    const entries = this.list(absDir);
    if (!entries) return false;
    for (const e of entries) if (e.name === name) return e.kind === EntryKind.File;
    return false;
  }

  /** A compact text of one listing (names and kinds), for content keys. */
  fingerprint(absDir: string): string {
    return listingText(this.list(absDir));
  }

  /**
   * fingerprint(absDir) when this run has already listed `absDir` (a `//...` walk lists every package
   * directory), else undefined; reads nothing and tells no observer.
   */
  fingerprintIfListed(absDir: string): string | undefined {
    const entries = this.listings.get(absDir);
    return entries === undefined ? undefined : listingText(entries);
  }

  /**
   * Whether the listing of `absDir` is named by the directory's own stamp: every change to it (an
   * entry added, removed, renamed or replaced) changes the directory's mtime and ctime. Not so for a
   * listing with a symlink (its target can turn from file to directory, or dangle) or no listing.
   */
  isStampable(absDir: string): boolean {
    return this.list(absDir) !== null && !this.withLinks.has(absDir);
  }

  /**
   * Does the symlinked directory `name` inside `absDir` point at `absDir` itself or one of its
   * ancestors? Walking into it would never end (Bazel reports "infinite symlink expansion").
   */
  isSymlinkCycle(absDir: string, name: string): boolean {
    try {
      const target = realpathSync(`${absDir}/${name}`);
      const here = realpathSync(absDir);
      return here === target || here.startsWith(target.endsWith('/') ? target : `${target}/`);
    } catch {
      return true;
    }
  }

  /** Forgets every listing (a new run). */
  clear(): void {
    this.listings.clear();
    this.withLinks.clear();
  }
}

function listingText(entries: readonly DirEntry[] | null): string {
  if (!entries) return '!';
  let s = '';
  for (const e of entries) s += `${e.kind === EntryKind.Directory ? 'd' : 'f'}${e.name}\u0000`;
  return s;
}

/** `onLink` is told when an entry is neither a plain file nor a directory. */
function readListing(absDir: string, onLink: () => void): readonly DirEntry[] | null {
  let dirents;
  try {
    dirents = readdirSync(absDir, { withFileTypes: true });
  } catch {
    return null;
  }
  const out: DirEntry[] = [];
  for (const d of dirents) {
    if (d.isFile()) out.push({ name: d.name, kind: EntryKind.File, symlink: false });
    else if (d.isDirectory()) out.push({ name: d.name, kind: EntryKind.Directory, symlink: false });
    else if (d.isSymbolicLink()) {
      onLink();
      let st;
      try {
        st = statSync(`${absDir}/${d.name}`, { throwIfNoEntry: false });
      } catch {
        continue; // a symlink loop (ELOOP) or an unreadable target: skipped like a dangling link
      }
      if (st?.isDirectory()) out.push({ name: d.name, kind: EntryKind.Directory, symlink: true });
      else if (st?.isFile()) out.push({ name: d.name, kind: EntryKind.File, symlink: true });
    } else onLink();
  }
  out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return out;
}
