import { Builtin, None, StarList, StarTuple, StarlarkError, typeName, unpackArgs, type Thread, type Value } from '../starlark/index.js';
import { Label, type PackageContext } from './label.js';
import { packageId } from './package.js';

/** A package spec of a `visibility()` list: a package of a repository (`//pkg` is in the .bzl's own). */
interface PackageSpec {
  readonly repo: string;
  readonly pkg: string;
  /** `//pkg/...` or `//pkg:__subpackages__`: the package and everything below it (`//...`: every package of the repository). */
  readonly subpackages: boolean;
}

/** Who may load a .bzl file (Bazel's BzlVisibility): everyone (the default), its own package only, or listed packages. */
export type BzlVisibility = { readonly kind: 'public' } | { readonly kind: 'private' } | { readonly kind: 'packages'; readonly specs: readonly PackageSpec[] };

export const PUBLIC_BZL: BzlVisibility = { kind: 'public' };

/** Thread-local key: what the top level of a .bzl being initialised has declared. */
const BZL_INIT_KEY = 'kiln.bzl-init';

interface BzlInit {
  /** The repository of the .bzl file: package specs without one are in it. */
  readonly repo: string;
  visibility: BzlVisibility | undefined;
}

/** Marks `thread` as initialising a .bzl file; `visibility()` records into what this returns. */
export function startBzlInit(thread: Thread, repo: string): { readonly visibility: () => BzlVisibility } {
  const init: BzlInit = { repo, visibility: undefined };
  thread.locals.set(BZL_INIT_KEY, init);
  return { visibility: () => init.visibility ?? PUBLIC_BZL };
}

/** Present-day Bazel's PackageSpecification.fromStringForBzlVisibility, in the repository `repo` of the .bzl file. */
function packageSpec(raw: string, repo: string): PackageSpec | 'public' | 'private' {
  if (raw === 'public' || raw === 'private') return raw;
  if (raw.startsWith('-')) {
    const rest = raw.slice(1);
    if (rest === 'public' || rest === 'private') throw new StarlarkError(`Cannot negate "${rest}" package specification`);
    throw new StarlarkError('Cannot use negative package patterns here');
  }
  if (!raw.startsWith('//') && !raw.startsWith('@')) {
    throw new StarlarkError(`invalid package name '${raw}': must start with '//', '@', or be 'public' or 'private'`);
  }
  const context = { repo, pkg: '' };
  // `//pkg:__pkg__` and `//pkg:__subpackages__`, as in a package_group.
  if (raw.includes(':')) {
    try {
      const l = Label.parse(raw, context);
      if (l.name === '__pkg__' || l.name === '__subpackages__') return { repo: l.repo, pkg: l.pkg, subpackages: l.name === '__subpackages__' };
    } catch {
      // Not a label: parsed as a package path below, which reports it.
    }
  }
  const subpackages = raw.endsWith('/...');
  // `//...` and `@repo//...` leave `//` and `@repo//`: the repository's root package.
  const path = !subpackages ? raw : raw.endsWith('//...') ? raw.slice(0, -3) : raw.slice(0, -4);
  try {
    const l = Label.parse(`${path}:__pkg__`, context);
    return { repo: l.repo, pkg: l.pkg, subpackages };
  } catch (e) {
    throw new StarlarkError(`invalid package name '${raw}': ${(e as Error).message}`, { cause: e });
  }
}

function parseVisibility(v: Value, repo: string): BzlVisibility {
  let values: string[];
  if (typeof v === 'string') values = [v];
  else if (v instanceof StarList || v instanceof StarTuple) {
    values = v.elems.map((e, i) => {
      if (typeof e !== 'string') throw new StarlarkError(`at index ${i} of visibility list, got element of type ${typeName(e)}, want string`);
      return e;
    });
  } else throw new StarlarkError(`Invalid visibility: got '${typeName(v)}', want string or list of strings`);
  const specs: PackageSpec[] = [];
  let isPublic = false;
  for (const raw of values) {
    const spec = packageSpec(raw, repo);
    if (spec === 'public') isPublic = true;
    else if (spec !== 'private') specs.push(spec);
  }
  return isPublic ? PUBLIC_BZL : specs.length === 0 ? { kind: 'private' } : { kind: 'packages', specs };
}

/** `visibility(value)`: once, at the top level of a .bzl file, as Bazel's checks say. */
export const visibilityBuiltin = new Builtin('visibility', (thread, args, kwargs) => {
  const [value] = unpackArgs('visibility', args, kwargs, ['value']);
  const init = thread.locals.get(BZL_INIT_KEY) as BzlInit | undefined;
  if (!init) throw new StarlarkError('load visibility may only be set during .bzl initialization');
  // The builtin's caller must be the module's top level, the thread's only frame.
  if (thread.depth !== 1) throw new StarlarkError('load visibility may only be set at the top level, not inside a function');
  if (init.visibility !== undefined) throw new StarlarkError('load visibility may not be set more than once');
  init.visibility = parseVisibility(value!, init.repo);
  return None;
});

/** Whether a file of package `from` may load `loaded`, a .bzl whose load visibility is `visibility`. */
export function bzlLoadAllowed(visibility: BzlVisibility, loaded: Label, from: PackageContext): boolean {
  if (loaded.repo === from.repo && loaded.pkg === from.pkg) return true;
  switch (visibility.kind) {
    case 'public':
      return true;
    case 'private':
      return false;
    case 'packages':
      return visibility.specs.some(
        (s) => s.repo === from.repo && (s.subpackages ? s.pkg === '' || from.pkg === s.pkg || from.pkg.startsWith(`${s.pkg}/`) : from.pkg === s.pkg),
      );
  }
}

/** Bazel's refusal (BzlLoadFunction), the loading package in its canonical form. */
export function bzlNotVisibleMessage(loaded: Label, from: PackageContext): string {
  return `Starlark file ${loaded} is not visible for loading from package ${packageId(from.repo, from.pkg)}. Check the file's \`visibility()\` declaration.`;
}
