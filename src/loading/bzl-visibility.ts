import { Builtin, None, StarList, StarTuple, StarlarkError, typeName, unpackArgs, type Thread, type Value } from '../starlark/index.js';
import { validatePackageName, type Label, type PackageContext } from './label.js';
import { packageId } from './package.js';

/** A package spec of a `visibility()` list, in the repository of the .bzl that declares it. */
interface PackageSpec {
  readonly pkg: string;
  /** `//pkg/...`: the package and everything below it (`//...`: every package of the repository). */
  readonly subpackages: boolean;
}

/** Who may load a .bzl file (Bazel's BzlVisibility): everyone (the default), its own package only, or listed packages. */
export type BzlVisibility = { readonly kind: 'public' } | { readonly kind: 'private' } | { readonly kind: 'packages'; readonly specs: readonly PackageSpec[] };

export const PUBLIC_BZL: BzlVisibility = { kind: 'public' };

/** Thread-local key: what the top level of a .bzl being initialised has declared. */
const BZL_INIT_KEY = 'kiln.bzl-init';

interface BzlInit {
  visibility: BzlVisibility | undefined;
}

/** Marks `thread` as initialising a .bzl file; `visibility()` records into what this returns. */
export function startBzlInit(thread: Thread): { readonly visibility: () => BzlVisibility } {
  const init: BzlInit = { visibility: undefined };
  thread.locals.set(BZL_INIT_KEY, init);
  return { visibility: () => init.visibility ?? PUBLIC_BZL };
}

function packageSpec(raw: string): PackageSpec {
  if (raw.startsWith('-')) throw new StarlarkError('Cannot use negative package patterns here');
  if (!raw.startsWith('//')) throw new StarlarkError(`invalid package name '${raw}': must start with '//'`);
  let pkg = raw.slice(2);
  let subpackages = false;
  if (pkg === '...') {
    pkg = '';
    subpackages = true;
  } else if (pkg.endsWith('/...')) {
    pkg = pkg.slice(0, -4);
    subpackages = true;
  }
  const problem = validatePackageName(pkg);
  if (problem !== null) throw new StarlarkError(`invalid package name '${raw}': ${problem}`);
  return { pkg, subpackages };
}

function parseVisibility(v: Value): BzlVisibility {
  if (typeof v === 'string') {
    if (v === 'public') return PUBLIC_BZL;
    if (v === 'private') return { kind: 'private' };
    return { kind: 'packages', specs: [packageSpec(v)] };
  }
  if (!(v instanceof StarList || v instanceof StarTuple)) throw new StarlarkError(`Invalid visibility: got '${typeName(v)}', want string or list of strings`);
  const specs: PackageSpec[] = [];
  let isPublic = false;
  v.elems.forEach((e, i) => {
    if (typeof e !== 'string') throw new StarlarkError(`at index ${i} of visibility list, got element of type ${typeName(e)}, want string`);
    if (e === 'public') isPublic = true;
    else if (e !== 'private') specs.push(packageSpec(e));
  });
  return isPublic ? PUBLIC_BZL : specs.length === 0 ? { kind: 'private' } : { kind: 'packages', specs };
}

/** `visibility(value)`: once, at the top level of a .bzl file, as Bazel's checks say. */
export const visibilityBuiltin = new Builtin('visibility', (thread, args, kwargs) => {
  const [value] = unpackArgs('visibility', args, kwargs, ['value']);
  const init = thread.locals.get(BZL_INIT_KEY) as BzlInit | undefined;
  if (!init) throw new StarlarkError('load visibility may only be set during .bzl initialization');
  // The builtin's caller must be the module's top level, the thread's only frame.
  if (thread.depth !== 1) throw new StarlarkError('load visibility may only be set at the top level');
  if (init.visibility !== undefined) throw new StarlarkError('load visibility may not be set more than once');
  init.visibility = parseVisibility(value!);
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
      return (
        loaded.repo === from.repo &&
        visibility.specs.some((s) => (s.subpackages ? s.pkg === '' || from.pkg === s.pkg || from.pkg.startsWith(`${s.pkg}/`) : from.pkg === s.pkg))
      );
  }
}

/** Bazel's refusal (BzlLoadFunction), the loading package in its canonical form. */
export function bzlNotVisibleMessage(loaded: Label, from: PackageContext): string {
  return `Starlark file ${loaded} is not visible for loading from package ${packageId(from.repo, from.pkg)}. Check the file's \`visibility()\` declaration.`;
}
