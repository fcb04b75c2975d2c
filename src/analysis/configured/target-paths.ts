import { canonicalFlagLabel } from '../options/parse-build-options.js';

/** The parts of a canonical label (`@repo//pkg:name`, repo '' for the main repository). */
export interface LabelParts {
  readonly repo: string;
  readonly pkg: string;
  readonly name: string;
}

/** Characters a target name never holds (what `.` in a regular expression does not match). */
const LINE_BREAK = /[\n\r\u2028\u2029]/;

/** Splits `@repo//pkg:name` by index, not by a regular expression: analysis calls it for every edge. */
export function splitLabel(label: string): LabelParts {
  let start = 0;
  let repo = '';
  if (label.charCodeAt(0) === 64 /* @ */) {
    start = label.indexOf('/');
    repo = start < 0 ? '' : label.slice(1, start);
  }
  const colon = start < 0 || !label.startsWith('//', start) ? -1 : label.indexOf(':', start + 2);
  const name = colon < 0 ? '' : label.slice(colon + 1);
  if (colon < 0 || LINE_BREAK.test(name)) throw new Error(`not a canonical label: ${label}`);
  return { repo, pkg: label.slice(start + 2, colon), name };
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
