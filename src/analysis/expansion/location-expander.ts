import { shellQuote } from '../../core/index.js';

/**
 * Location substitution (spec, genrule 4.1): `$(location L)`, `$(locations L)`, `$(execpath L)`,
 * `$(execpaths L)`, `$(rootpath L)`, `$(rootpaths L)` for labels the rule declares (srcs,
 * tools, outs). As in Bazel's LocationExpander, a label's paths are a sorted set (duplicates
 * dropped, sorted by UTF-16 code units like Java's String order) and each one is shell-quoted as
 * Bazel's ShellEscaper quotes it. The result is still Make-variable text: every `$` in a
 * substituted path is written as `$$`, so the next phase takes paths literally and never
 * expands them again.
 */

/** The files one prerequisite label stands for. */
export interface LocationEntry {
  /** Paths relative to the execution root (`bazel-out/...` for generated files). */
  readonly execPaths: readonly string[];
  /** Runfiles-relative paths (`pkg/file`, `../repo/file` for other repositories). */
  readonly rootPaths: readonly string[];
}

export interface LocationContext {
  /** Canonical label → files, for every label in srcs, tools and outs. */
  readonly prerequisites: ReadonlyMap<string, LocationEntry>;
  /** Makes a label written in the command canonical (relative to the rule's package); undefined if malformed. */
  readonly canonicalize: (raw: string) => string | undefined;
}

/** A failure the caller reports as `in <attr> attribute of <rule>: <message>`. */
export class ExpansionFailure extends Error {}

const FUNCTIONS = new Set(['location', 'locations', 'execpath', 'execpaths', 'rootpath', 'rootpaths']);

/**
 * `ctx.expand_location(input)`, as Bazel's LocationExpander: each `$(location ...)` & co. replaced
 * by its paths, quoted as in genrules and joined with spaces; every other character kept as written, `$$` and Make variables
 * included (no Make phase follows, so `$$(location x)` is a `$` and then an expansion).
 */
export function expandLocationFunctions(text: string, context: LocationContext): string {
  let out = '';
  let i = 0;
  for (;;) {
    const start = text.indexOf('$(', i);
    if (start < 0) return out + text.slice(i);
    const close = text.indexOf(')', start + 2);
    const body = close < 0 ? '' : text.slice(start + 2, close);
    const space = body.search(/\s/);
    const fn = space < 0 ? body : body.slice(0, space);
    if (close < 0 || space < 0 || !FUNCTIONS.has(fn)) {
      out += text.slice(i, start + 1);
      i = start + 1;
      continue;
    }
    out += text.slice(i, start) + resolve(fn, body.slice(space).trim(), context).map(shellQuote).join(' ');
    i = close + 1;
  }
}

export function expandLocations(text: string, context: LocationContext): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const dollar = text.indexOf('$', i);
    if (dollar < 0 || dollar === text.length - 1) {
      out += text.slice(i);
      break;
    }
    out += text.slice(i, dollar);
    const next = text[dollar + 1];
    if (next !== '(') {
      // `$$` and `$<`-style variables belong to the Make phase; keep both characters.
      out += text.slice(dollar, dollar + 2);
      i = dollar + 2;
      continue;
    }
    const close = text.indexOf(')', dollar + 2);
    const body = close < 0 ? text.slice(dollar + 2) : text.slice(dollar + 2, close);
    const space = body.search(/\s/);
    const fn = space < 0 ? body : body.slice(0, space);
    if (space < 0 || !FUNCTIONS.has(fn)) {
      // A Make variable or an unknown function: the Make phase decides.
      if (close < 0) {
        out += text.slice(dollar);
        break;
      }
      out += text.slice(dollar, close + 1);
      i = close + 1;
      continue;
    }
    if (close < 0) throw new ExpansionFailure(`unterminated $(${fn}) expression`);
    const paths = resolve(fn, body.slice(space).trim(), context);
    out += paths
      .map(shellQuote)
      .join(' ')
      .replaceAll('$', () => '$$');
    i = close + 1;
  }
  return out;
}

function resolve(fn: string, rawLabel: string, context: LocationContext): readonly string[] {
  const label = context.canonicalize(rawLabel);
  const entry = label === undefined ? undefined : context.prerequisites.get(label);
  if (label === undefined || entry === undefined) {
    throw new ExpansionFailure(`label '${label ?? rawLabel}' in $(${fn}) expression is not a declared prerequisite of this rule`);
  }
  const paths = sortedSet(fn.startsWith('rootpath') ? entry.rootPaths : entry.execPaths);
  const plural = fn.endsWith('s');
  if (paths.length === 0) throw new ExpansionFailure(`label '${label}' in $(${fn}) expression expands to no files`);
  if (!plural && paths.length > 1) {
    const shown = paths.slice(0, 5).join(', ');
    throw new ExpansionFailure(
      `label '${label}' in $(${fn}) expression expands to more than one file, please use $(${fn}s ${label}) instead.  Files (at most 5 shown) are: [${shown}]`,
    );
  }
  return paths;
}

function sortedSet(paths: readonly string[]): readonly string[] {
  return [...new Set(paths)].sort();
}
