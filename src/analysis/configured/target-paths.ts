import { canonicalFlagLabel } from '../options/parse-build-options.js';

/** The parts of a canonical label (`@repo//pkg:name`, repo '' for the main repository). */
interface LabelParts {
  readonly repo: string;
  readonly pkg: string;
  readonly name: string;
}

export function splitLabel(label: string): LabelParts {
  const m = /^(?:@([^/]*))?\/\/([^:]*):(.*)$/.exec(label);
  if (!m) throw new Error(`not a canonical label: ${label}`);
  return { repo: m[1] ?? '', pkg: m[2]!, name: m[3]! };
}

export function packageKeyOf(label: string): string {
  const { repo, pkg } = splitLabel(label);
  return `${repo === '' ? '' : `@${repo}`}//${pkg}`;
}

/** `pkg/name` in the main repository, `external/repo/pkg/name` in others: a source file's exec path. */
export function sourceExecPath(label: string): string {
  const { repo, pkg, name } = splitLabel(label);
  const rel = pkg === '' ? name : `${pkg}/${name}`;
  return repo === '' ? rel : `external/${repo}/${rel}`;
}

/** The runfiles-relative path: `pkg/name`, or `../repo/pkg/name` for other repositories. */
export function rootPathOf(label: string): string {
  const { repo, pkg, name } = splitLabel(label);
  const rel = pkg === '' ? name : `${pkg}/${name}`;
  return repo === '' ? rel : `../${repo}/${rel}`;
}

/** A package's directory under an output root (`external/repo/pkg` for other repositories). */
export function packageOutputDir(root: string, label: string): string {
  const { repo, pkg } = splitLabel(label);
  const dir = repo === '' ? pkg : `external/${repo}${pkg === '' ? '' : `/${pkg}`}`;
  return dir === '' ? root : `${root}/${dir}`;
}

/**
 * A label as written in package `context` made canonical: `:x` and `x` are in that package,
 * `//p:x`, `//p` and `@r//p:x` are absolute. Undefined when malformed.
 */
export function canonicalizeIn(context: string, raw: string): string | undefined {
  const text = raw.trim();
  if (text.startsWith('//') || text.startsWith('@')) return canonicalFlagLabel(text);
  const name = text.startsWith(':') ? text.slice(1) : text;
  if (name === '' || /[\s:]/.test(name)) return undefined;
  const { repo, pkg } = splitLabel(context);
  return `${repo === '' ? '' : `@${repo}`}//${pkg}:${name}`;
}
