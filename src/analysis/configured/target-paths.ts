import { Label, LabelSyntaxError } from '../../loading/index.js';

// Analysis names targets by their canonical label strings; these read them through loading's Label.

export function packageKeyOf(label: string): string {
  return Label.parse(label).packageKey;
}

/** `pkg/name` in the main repository, `external/repo/pkg/name` in others: a source file's exec path. */
export function sourceExecPath(label: string): string {
  return Label.parse(label).execPath;
}

/** The runfiles-relative path: `pkg/name`, or `../repo/pkg/name` for other repositories. */
export function rootPathOf(label: string): string {
  return Label.parse(label).runfilesPath;
}

/** The name part of a canonical label: `//a:b/c.txt` → `b/c.txt`. */
export function targetNameOf(label: string): string {
  return Label.parse(label).name;
}

/** Another target of the same package: `//a:x` and `y.txt` → `//a:y.txt`. */
export function siblingLabel(label: string, name: string): string {
  return Label.parse(label).sibling(name).toString();
}

/** The package's directory below the exec root and each output root: `pkg`, `external/r/pkg`, '' for the root package. */
export function packageExecPathOf(label: string): string {
  return Label.parse(label).packageExecPath;
}

/** A package's directory under an output root (`external/repo/pkg` for other repositories). */
export function packageOutputDir(root: string, label: string): string {
  const dir = packageExecPathOf(label);
  return dir === '' ? root : `${root}/${dir}`;
}

/**
 * A label as written in package `context` made canonical: `:x` and `x` are in that package,
 * `//p:x`, `//p` and `@r//p:x` are absolute. Undefined when malformed.
 */
export function canonicalizeIn(context: string, raw: string): string | undefined {
  try {
    return Label.parse(raw.trim(), Label.parse(context)).toString();
  } catch (e) {
    if (e instanceof LabelSyntaxError) return undefined;
    throw e;
  }
}
