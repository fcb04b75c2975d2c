import { KilnError } from '../core/index.js';
import { Label, validatePackageName } from '../loading/index.js';

/** A malformed target pattern. */
export class TargetPatternError extends KilnError {}

/**
 * A parsed target pattern: one target, every rule (`:all`) or every target (`:*`, `:all-targets`)
 * of one package, or the same for every package beneath a directory (`/...`).
 */
export type TargetPattern =
  | { readonly kind: 'single'; readonly label: Label; readonly text: string }
  | { readonly kind: 'package'; readonly repo: string; readonly pkg: string; readonly allTargets: boolean; readonly text: string }
  | { readonly kind: 'beneath'; readonly repo: string; readonly dir: string; readonly allTargets: boolean; readonly text: string };

/**
 * Parses a target pattern. Relative patterns (`:all`, `foo/...`, `foo:bar`) are taken relative to
 * `offset`, the working directory's path inside the workspace, as Bazel does.
 */
export function parseTargetPattern(text: string, offset = ''): TargetPattern {
  let rest = text;
  let repo = '';
  if (rest.startsWith('@')) {
    const slashes = rest.indexOf('//');
    if (slashes < 0) return { kind: 'single', label: parseLabel(text, text, offset), text };
    repo = rest.slice(rest.startsWith('@@') ? 2 : 1, slashes);
    rest = rest.slice(slashes);
  }
  let absolute: string;
  if (rest.startsWith('//') && !rest.startsWith('///')) absolute = rest.slice(2);
  else if (rest.startsWith('/')) {
    throw new TargetPatternError(`not a valid absolute pattern (absolute target patterns must start with exactly two slashes): '${text}'`);
  } else if (rest.startsWith(':')) absolute = `${offset}${rest}`;
  else absolute = offset === '' ? rest : `${offset}/${rest}`;

  const colon = absolute.indexOf(':');
  const pkgPart = colon >= 0 ? absolute.slice(0, colon) : absolute;
  const targetPart = colon >= 0 ? absolute.slice(colon + 1) : undefined;
  const wildcard = targetPart === 'all' || targetPart === '*' || targetPart === 'all-targets';

  if (pkgPart === '...' || pkgPart.endsWith('/...')) {
    const dir = pkgPart === '...' ? '' : pkgPart.slice(0, -4);
    if (targetPart !== undefined && !wildcard)
      throw new TargetPatternError(`invalid target format '${text}': '${targetPart}' is not a wildcard; use :all, :* or :all-targets after '...'`);
    checkPackage(dir, text);
    return { kind: 'beneath', repo, dir, allTargets: targetPart === '*' || targetPart === 'all-targets', text };
  }
  if (wildcard) {
    checkPackage(pkgPart, text);
    return { kind: 'package', repo, pkg: pkgPart, allTargets: targetPart !== 'all', text };
  }
  if (pkgPart.endsWith('/')) throw new TargetPatternError(`The package part of '${text}' should not end in a slash`);
  return { kind: 'single', label: parseLabel(`${repo ? `@${repo}` : ''}//${absolute}`, text, offset), text };
}

function checkPackage(pkg: string, text: string): void {
  const err = validatePackageName(pkg);
  if (err) throw new TargetPatternError(`Bad target pattern '${text}': ${err}`);
}

function parseLabel(raw: string, text: string, _offset: string): Label {
  try {
    return Label.parse(raw);
  } catch (e) {
    throw new TargetPatternError(`invalid target format '${text}': ${(e as Error).message}`, undefined, { cause: e });
  }
}
