import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { KilnError } from '../core/index.js';
import { DirectoryLister, EntryKind } from './directory-lister.js';
import type { Label } from './label.js';
import { workspaceRegistrations } from './workspace-macros.js';

const WORKSPACE_MARKERS = ['MODULE.bazel', 'WORKSPACE.bazel', 'WORKSPACE'];
/** BUILD.bazel wins when both exist. */
export const BUILD_FILE_NAMES = ['BUILD.bazel', 'BUILD'] as const;

/** Not inside a workspace: Bazel's wording. */
export class NoWorkspaceError extends KilnError {}

/** The nearest folder at or above `startDir` holding WORKSPACE, WORKSPACE.bazel or MODULE.bazel. */
export function findWorkspaceRoot(startDir: string): string | undefined {
  let dir = startDir;
  for (;;) {
    for (const marker of WORKSPACE_MARKERS) {
      const st = statSync(join(dir, marker), { throwIfNoEntry: false });
      if (st?.isFile()) return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * The main repository's name: `module(name = ...)` in MODULE.bazel, else `workspace(name = ...)` in
 * WORKSPACE(.bazel), else '' (unnamed, as Bazel's `__main__`).
 */
export function readWorkspaceName(root: string): string {
  const tryFile = (file: string, fn: string): string | undefined => {
    const path = join(root, file);
    if (!existsSync(path)) return undefined;
    const text = readFileSync(path, 'utf8');
    const call = new RegExp(`(?:^|\\n)\\s*${fn}\\s*\\(([^)]*)\\)`).exec(text);
    if (!call) return undefined;
    return /\bname\s*=\s*["']([^"']*)["']/.exec(call[1]!)?.[1];
  };
  return tryFile('MODULE.bazel', 'module') ?? tryFile('WORKSPACE.bazel', 'workspace') ?? tryFile('WORKSPACE', 'workspace') ?? '';
}

/**
 * Repositories the main workspace declares on disk: `local_repository(name, path)` in
 * WORKSPACE(.bazel) and `local_path_override(module_name, path)` in MODULE.bazel, paths resolved
 * against the workspace root. Such a repository wins over Kiln's built-in one of the same name.
 */
export function readLocalRepositories(root: string): Map<string, string> {
  const repos = new Map<string, string>();
  const scan = (file: string, fn: string, nameParam: string) => {
    const path = join(root, file);
    if (!existsSync(path)) return;
    const text = readFileSync(path, 'utf8');
    for (const call of text.matchAll(new RegExp(`(?:^|\\n)\\s*${fn}\\s*\\(([^)]*)\\)`, 'g'))) {
      const name = new RegExp(`\\b${nameParam}\\s*=\\s*["']([^"']*)["']`).exec(call[1]!)?.[1];
      const dir = /\bpath\s*=\s*["']([^"']*)["']/.exec(call[1]!)?.[1];
      if (name && dir !== undefined && !repos.has(name)) repos.set(name, resolve(root, dir));
    }
  };
  scan('MODULE.bazel', 'local_path_override', 'module_name');
  scan(existsSync(join(root, 'WORKSPACE.bazel')) ? 'WORKSPACE.bazel' : 'WORKSPACE', 'local_repository', 'name');
  return repos;
}

/** What the root module and WORKSPACE register for toolchain resolution: target patterns, in order. */
export interface Registrations {
  readonly toolchains: readonly string[];
  readonly executionPlatforms: readonly string[];
  /** The .bzl files of the macros WORKSPACE calls that were read for them (absolute paths). */
  readonly sources: readonly string[];
}

/**
 * `register_toolchains(...)` and `register_execution_platforms(...)` of the main repository: MODULE.bazel's
 * first (the root module's registrations come before the WORKSPACE suffix's, as in Bazel), then
 * WORKSPACE(.bazel)'s, each call's string arguments in order (keyword arguments such as
 * `dev_dependency = True` are skipped), WORKSPACE's including those of the macros it loads and calls
 * (workspace-macros.ts). Patterns (`//tc:all`, `//tc/...`) stay as written.
 */
export function readRegistrations(root: string): Registrations {
  const toolchains: string[] = [];
  const executionPlatforms: string[] = [];
  const sources: string[] = [];
  const scan = (file: string) => {
    const path = join(root, file);
    if (!existsSync(path)) return;
    const text = readFileSync(path, 'utf8').replace(/#[^\n]*/g, '');
    for (const call of text.matchAll(/(?:^|\n)\s*(register_toolchains|register_execution_platforms)\s*\(([^)]*)\)/g)) {
      const out = call[1] === 'register_toolchains' ? toolchains : executionPlatforms;
      for (const arg of call[2]!.split(',')) {
        const literal = /^\s*["']([^"']*)["']\s*$/.exec(arg);
        if (literal) out.push(literal[1]!);
      }
    }
  };
  scan('MODULE.bazel');
  const workspaceFile = existsSync(join(root, 'WORKSPACE.bazel')) ? 'WORKSPACE.bazel' : 'WORKSPACE';
  const fromMacros = existsSync(join(root, workspaceFile))
    ? workspaceRegistrations(root, workspaceFile, readWorkspaceName(root), readLocalRepositories(root))
    : undefined;
  if (fromMacros) {
    toolchains.push(...fromMacros.toolchains);
    executionPlatforms.push(...fromMacros.executionPlatforms);
    sources.push(...fromMacros.sources);
  } else {
    // A WORKSPACE that does not parse: its literal calls (its other errors are reported elsewhere).
    scan(workspaceFile);
  }
  return { toolchains, executionPlatforms, sources };
}

/** Directories a `//...` walk never enters: convenience symlinks and output trees. */
function isSkippedTopLevel(name: string): boolean {
  return name.startsWith('kiln-') || name.startsWith('bazel-') || name === '.git';
}

/** What the convenience symlinks in the workspace root point at, after their prefix (`--symlink_prefix`, `kiln-` by default). */
export const CONVENIENCE_SYMLINKS = ['bin', 'genfiles', 'out', 'testlogs'] as const;

/** The convenience symlinks of Kiln's and Bazel's default prefixes, which no glob sees. */
const HIDDEN_LINKS: ReadonlySet<string> = new Set(['kiln-', 'bazel-'].flatMap((prefix) => CONVENIENCE_SYMLINKS.map((name) => `${prefix}${name}`)));

/** A workspace on disk: its root, its name, and package lookups over a shared directory lister. */
export class Workspace {
  readonly ignored: ReadonlySet<string>;
  /** Absolute directories a `//...` walk never enters (an output base placed inside the workspace). */
  private readonly excludedDirs = new Set<string>();

  constructor(
    readonly root: string,
    readonly name: string,
    readonly lister: DirectoryLister = new DirectoryLister(),
  ) {
    this.ignored = readBazelIgnore(root);
    // Bazel's globs follow its bazel-* links into the output tree (bazelbuild/bazel#6350); Kiln's are no source.
    // `<prefix><workspace directory's name>` points at the execroot: hidden the same way.
    const execRootLinks = new Set(['kiln-', 'bazel-'].map((prefix) => `${prefix}${basename(root)}`));
    lister.hideEntries(root, (e) => e.symlink && (HIDDEN_LINKS.has(e.name) || execRootLinks.has(e.name)));
  }

  static discover(cwd: string, lister?: DirectoryLister): Workspace {
    const root = findWorkspaceRoot(cwd);
    if (root === undefined) {
      throw new NoWorkspaceError(
        'The query command is only supported from within a workspace (below a directory having a MODULE.bazel, WORKSPACE or WORKSPACE.bazel file).',
      );
    }
    return new Workspace(root, readWorkspaceName(root), lister);
  }

  /** Keeps `//...` out of `absDir` (used for the output base). */
  excludeDirectory(absDir: string): void {
    this.excludedDirs.add(absDir.replace(/\/+$/, ''));
  }

  /** Absolute path of a package directory. */
  dirOf(pkg: string): string {
    return pkg === '' ? this.root : `${this.root}/${pkg}`;
  }

  /** The BUILD file name of `pkg` (BUILD.bazel wins), or undefined when `pkg` is not a package. */
  buildFileOf(pkg: string): string | undefined {
    if (this.isIgnored(pkg)) return undefined;
    const dir = this.dirOf(pkg);
    for (const name of BUILD_FILE_NAMES) if (this.lister.hasFile(dir, name)) return name;
    return undefined;
  }

  isPackage(pkg: string): boolean {
    return this.buildFileOf(pkg) !== undefined;
  }

  private isIgnored(pkg: string): boolean {
    if (this.ignored.size === 0) return false;
    for (const ig of this.ignored) if (pkg === ig || pkg.startsWith(`${ig}/`)) return true;
    return false;
  }

  /** The innermost package containing the source path `path` (workspace-relative), or undefined. */
  containingPackage(path: string): string | undefined {
    let dir = path;
    for (;;) {
      const slash = dir.lastIndexOf('/');
      dir = slash < 0 ? '' : dir.slice(0, slash);
      if (this.isPackage(dir)) return dir;
      if (dir === '') return undefined;
    }
  }

  /**
   * Bazel's check that a label does not reach into a subpackage: for `//a:b/c` where `a/b` is a
   * package. Returns the error message, or null.
   */
  subpackageCrossing(label: Label): string | null {
    let idx = label.name.indexOf('/');
    while (idx >= 0) {
      const sub = label.pkg === '' ? label.name.slice(0, idx) : `${label.pkg}/${label.name.slice(0, idx)}`;
      if (this.isPackage(sub)) {
        const repo = label.repo === '' ? '' : `@${label.repo}`;
        return (
          `Label '${label}' is invalid because '${sub}' is a subpackage; perhaps you meant to put the colon here: ` +
          `'${repo}//${sub}:${label.name.slice(idx + 1)}'?`
        );
      }
      idx = label.name.indexOf('/', idx + 1);
    }
    return null;
  }

  /** Every package at or below `base` ('' for the whole workspace), sorted. */
  packagesUnder(base: string): string[] {
    const out: string[] = [];
    const walk = (pkg: string): void => {
      if (this.isIgnored(pkg)) return;
      const entries = this.lister.list(this.dirOf(pkg));
      if (!entries) return;
      for (const e of entries) {
        if (e.kind === EntryKind.File && (e.name === 'BUILD.bazel' || e.name === 'BUILD')) {
          out.push(pkg);
          break;
        }
      }
      for (const e of entries) {
        if (e.kind !== EntryKind.Directory) continue;
        if (pkg === '' && isSkippedTopLevel(e.name)) continue;
        if (e.symlink && this.lister.isSymlinkCycle(this.dirOf(pkg), e.name)) continue;
        if (this.excludedDirs.size > 0 && this.excludedDirs.has(`${this.dirOf(pkg)}/${e.name}`)) continue;
        // Symlinked directories are followed (as Bazel does) except the output-tree links above.
        walk(pkg === '' ? e.name : `${pkg}/${e.name}`);
      }
    };
    walk(base);
    return out.sort();
  }
}

function readBazelIgnore(root: string): Set<string> {
  const out = new Set<string>();
  for (const file of ['.bazelignore', '.kilnignore']) {
    const path = join(root, file);
    if (!existsSync(path)) continue;
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      const t = line.trim().replace(/\/+$/, '');
      if (t && !t.startsWith('#')) out.add(t);
    }
  }
  return out;
}
