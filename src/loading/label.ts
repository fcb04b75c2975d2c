import { KilnError } from '../core/index.js';

/** A malformed label; the message uses Bazel's LabelValidator wording. */
export class LabelSyntaxError extends KilnError {}

// Bazel's current LabelValidator wording (bazelbuild/bazel src/main/java/.../cmdline/LabelValidator.java).
const PACKAGE_NAME_ERROR =
  "package names may contain A-Z, a-z, 0-9, or any of ' !\"#$%&'()*+,-./;<=>?[]^_`{|}~' " + "(most 7-bit ascii characters except 0-31, 127, ':', or '\\')";
const PACKAGE_NAME_DOT_ERROR = "package name component contains only '.' characters";

/** Returns null when `pkg` is a valid package name, else Bazel's reason. */
export function validatePackageName(pkg: string): string | null {
  const len = pkg.length;
  if (len === 0) return null;
  if (pkg.charCodeAt(0) === 47 /* / */) return "package names may not start with '/'";
  for (let i = 0; i < len; i++) {
    const c = pkg.charCodeAt(i);
    if (c < 32 || c > 126 || c === 58 /* : */ || c === 92 /* \ */) return PACKAGE_NAME_ERROR;
  }
  if (pkg.charCodeAt(len - 1) === 47) return "package names may not end with '/'";
  // Each segment: empty means '//'; dots only means '.', '..', '...'.
  let start = 0;
  for (let i = 0; i <= len; i++) {
    if (i === len || pkg.charCodeAt(i) === 47) {
      if (i === start) return "package names may not contain '//' path separators";
      let dotsOnly = true;
      for (let j = start; j < i; j++) if (pkg.charCodeAt(j) !== 46) dotsOnly = false;
      if (dotsOnly) return PACKAGE_NAME_DOT_ERROR;
      start = i + 1;
    }
  }
  return null;
}

/** Returns null when `name` is a valid target name, else Bazel's reason. */
export function validateTargetName(name: string): string | null {
  const len = name.length;
  if (len === 0) return 'empty target name';
  if (name.charCodeAt(len - 1) === 13) return 'target names may not end with carriage returns (perhaps the input source is CRLF-terminated)';
  let segStart = 0;
  for (let i = 0; i <= len; i++) {
    const c = i < len ? name.charCodeAt(i) : 47;
    if (c === 47) {
      const seg = name.slice(segStart, i);
      if (i < len && i === 0) return "target names may not start with '/'";
      if (seg === '..') return "target names may not contain up-level references '..'";
      if (seg === '.' && !(len === 1 || i === len)) return "target names may not contain '.' as a path segment";
      if (seg === '' && i === len) return "target names may not end with '/'";
      if (seg === '' && i < len && i > 0) return "target names may not contain '//' path separators";
      segStart = i + 1;
      continue;
    }
    if (c === 58) return "target names may not contain ':'";
    if (c === 92) return "target names may not contain '\\'";
    if (c < 32 || c === 127) {
      return `target names may not contain non-printable characters: '\\x${c.toString(16).toUpperCase().padStart(2, '0')}'`;
    }
  }
  return null;
}

/** Returns null when `repo` is a valid (apparent or canonical) repository name. */
function validateRepoName(repo: string): string | null {
  for (let i = 0; i < repo.length; i++) {
    const c = repo.charCodeAt(i);
    const ok = (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 45 || c === 95 || c === 46 || c === 43 || c === 126;
    if (!ok) return "repo names may contain only A-Z, a-z, 0-9, '-', '_', '.', '+' and '~'";
  }
  if (repo === '.' || repo === '..') return "repo names are not allowed to be '.' or '..'";
  return null;
}

/** The package a relative label is resolved against. */
export interface PackageContext {
  readonly repo: string;
  readonly pkg: string;
}

export const MAIN_REPO = '';

/**
 * A target's name: repository ('' is the main repository), package path ('' is the root package)
 * and target name. Instances are interned by {@link Label.parse}, so equal labels parsed in the same
 * context are usually the same object; compare with {@link Label.equals} or {@link Label.key}.
 * Only this module creates labels (the constructor is private): every label has been through the parser
 * or the same validation.
 */
export class Label {
  private canonical: string | undefined;

  private constructor(
    readonly repo: string,
    readonly pkg: string,
    readonly name: string,
  ) {}

  /** `//pkg:name` for the main repository, `@repo//pkg:name` otherwise. */
  toString(): string {
    return (this.canonical ??= `${this.repo === MAIN_REPO ? '' : `@${this.repo}`}//${this.pkg}:${this.name}`);
  }

  /** A stable string key (the canonical form). */
  get key(): string {
    return this.toString();
  }

  /** The package identifier: `//pkg` or `@repo//pkg`. */
  get packageKey(): string {
    return `${this.repo === MAIN_REPO ? '' : `@${this.repo}`}//${this.pkg}`;
  }

  /** The package's path in the exec root: `pkg`, or `external/repo/pkg` for another repository. */
  get packageExecPath(): string {
    if (this.repo === MAIN_REPO) return this.pkg;
    return this.pkg === '' ? `external/${this.repo}` : `external/${this.repo}/${this.pkg}`;
  }

  /** The exec path of the source file the label names: `pkg/name`, or `external/repo/pkg/name`. */
  get execPath(): string {
    const dir = this.packageExecPath;
    return dir === '' ? this.name : `${dir}/${this.name}`;
  }

  /** The runfiles-relative path of the file the label names: `pkg/name`, or `../repo/pkg/name`. */
  get runfilesPath(): string {
    const rel = this.pkg === '' ? this.name : `${this.pkg}/${this.name}`;
    return this.repo === MAIN_REPO ? rel : `../${this.repo}/${rel}`;
  }

  equals(other: Label): boolean {
    return this === other || (this.repo === other.repo && this.pkg === other.pkg && this.name === other.name);
  }

  /** Another target in the same package. */
  sibling(name: string): Label {
    return Label.inPackage(this, name);
  }

  /** The same package and name in repository `repo` (an apparent repository name made canonical). */
  inRepository(repo: string): Label {
    return repo === this.repo ? this : new Label(repo, this.pkg, this.name);
  }

  /** Target `name` of package `context` (a package already loaded or validated: only the name is checked). */
  static inPackage(context: PackageContext, name: string): Label {
    const err = validateTargetName(name);
    if (err) throw new LabelSyntaxError(`invalid target name '${name}': ${err}`);
    return new Label(context.repo, context.pkg, name);
  }

  /**
   * Parses any label form. Relative forms (`:name`, `name`, `dir/file.txt`) need `context`;
   * absolute forms without a repository (`//pkg:name`) take the context's repository.
   */
  static parse(raw: string, context?: PackageContext): Label {
    const table = context ? contextTable(context) : internTable;
    let label = table.get(raw);
    if (label === undefined) {
      label = parseUncached(raw, context, (repo, pkg, name) => new Label(repo, pkg, name));
      if (table.size > 200_000) table.clear();
      table.set(raw, label);
    }
    return label;
  }
}

const internTable = new Map<string, Label>();
/**
 * Relative forms interned per context object (a package's loading passes the same one for all its
 * labels): no key text is built per call. A context is read-only, so its answers never change.
 */
const contextTables = new WeakMap<PackageContext, Map<string, Label>>();

function contextTable(context: PackageContext): Map<string, Label> {
  let table = contextTables.get(context);
  if (table === undefined) {
    table = new Map();
    contextTables.set(context, table);
  }
  return table;
}

function fail(message: string): never {
  throw new LabelSyntaxError(message);
}

/** `make` is the private constructor, handed over by Label.parse. */
function parseUncached(raw: string, context: PackageContext | undefined, make: (repo: string, pkg: string, name: string) => Label): Label {
  let rest = raw;
  let repo: string | undefined;
  if (rest.startsWith('@')) {
    const canonical = rest.startsWith('@@');
    const repoStart = canonical ? 2 : 1;
    const slashes = rest.indexOf('//');
    if (slashes < 0) {
      // `@repo` alone means `@repo//:repo`.
      repo = rest.slice(repoStart);
      if (repo === '') fail(`invalid label '${raw}': empty target name`);
      const err = validateRepoName(repo);
      if (err) fail(`invalid repository name '${rest.slice(0, repoStart)}${repo}': ${err}`);
      return make(repo, '', repo);
    }
    repo = rest.slice(repoStart, slashes);
    const err = validateRepoName(repo);
    if (err) fail(`invalid repository name '${rest.slice(0, slashes)}': ${err}`);
    rest = rest.slice(slashes);
  }
  if (rest.startsWith('//')) {
    const body = rest.slice(2);
    const colon = body.indexOf(':');
    const pkg = colon >= 0 ? body.slice(0, colon) : body;
    const name = colon >= 0 ? body.slice(colon + 1) : pkg.slice(pkg.lastIndexOf('/') + 1);
    if (pkg.includes('...')) {
      // Only a target pattern may contain '...'.
      if (pkg === '...' || pkg.endsWith('/...')) fail(`invalid label '${raw}': package name cannot contain '...'`);
    }
    let err = validatePackageName(pkg);
    if (err) {
      let msg = `invalid package name '${pkg}': ${err}`;
      if (colon < 0 && pkg.endsWith(`/${name}`)) msg += ` (perhaps you meant ":${name}"?)`;
      fail(msg);
    }
    err = validateTargetName(name);
    if (err) fail(`invalid target name '${name}': ${err}`);
    return make(repo ?? context?.repo ?? MAIN_REPO, pkg, name);
  }
  if (repo !== undefined) fail(`invalid label '${raw}'`);
  // Relative: `:name`, `name` or `dir/file` inside the current package.
  const colon = rest.indexOf(':');
  const name = colon >= 0 ? rest.slice(colon + 1) : rest;
  const err = validateTargetName(name);
  if (err) fail(`invalid target name '${name}': ${err}`);
  // `pkg:name` without '//' is ambiguous; Bazel asks for an absolute or a package-relative label.
  if (colon > 0) fail(`invalid label '${raw}': relative labels with a package part must start with '//'`);
  if (!context) fail(`invalid label '${raw}': a relative label needs a current package`);
  return make(context.repo, context.pkg, name);
}
