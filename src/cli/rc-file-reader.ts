import { readFileSync, realpathSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { UsageError } from '../core/index.js';

/** One word of an rc file line after its command: `build:ci --x=1` gives `{command: 'build:ci', option: '--x=1'}`. */
export interface RcOption {
  /** The canonical path of the file that holds the line (an imported file names itself, not the importer). */
  readonly source: string;
  /** The line's first word: `build`, `build:ci`, `common`, `startup`... */
  readonly command: string;
  readonly option: string;
  /** 1-based, counting the physical lines a trailing backslash joins as the first of them. */
  readonly line: number;
}

/** What reading needs beyond the path: the workspace for `%workspace%`, the directory relative imports start from, `${VAR}`s. */
export interface RcReadContext {
  /** Undefined outside a workspace: `%workspace%` is then an error, as in Bazel. */
  readonly workspaceRoot: string | undefined;
  /** Relative `import` paths resolve against the working directory, as Bazel's client reads them. */
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

const IMPORT_DEPTH_LIMIT = 100;

/**
 * Reads one rc file as Bazel's client does (src/main/cpp/rc_file.cc): a trailing backslash joins
 * lines, words split as Bourne shell words (quotes, backslash escapes, `#` comments), `${VAR}`
 * replaced by a set environment variable, `import FILE` and `try-import FILE` read another file in
 * place (`%workspace%/...` relative to the workspace, other relative paths to the working directory).
 * @throws UsageError naming the file and line: an unreadable `import`, an import loop, a malformed import, an open quote.
 */
export function readRcFile(path: string, ctx: RcReadContext): RcOption[] {
  const out: RcOption[] = [];
  const text = readText(path);
  if (text === undefined) throw new UsageError(`Unexpected error reading config file '${path}': No such file or directory`);
  parseInto(path, text, ctx, [canonical(path)], out);
  return out;
}

/** The file's text, or undefined when it cannot be read (missing, a directory, no permission). */
export function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The real path when the file exists (rc sources are named by it, and duplicates found with it). */
export function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function parseInto(path: string, text: string, ctx: RcReadContext, stack: string[], out: RcOption[]): void {
  const source = canonical(path);
  const physical = text.split('\n');
  for (let i = 0; i < physical.length; i++) {
    const lineNumber = i + 1;
    let line = physical[i]!;
    // A '\' at the end of a line continues it (Bazel removes the backslash and the newline).
    while (/\\\r?$/.test(line) && i + 1 < physical.length) line = line.replace(/\\\r?$/, '') + physical[++i]!;
    line = expandEnvironment(line.trim(), ctx.env);
    if (line === '') continue;
    const words = tokenize(line, `${source}:${lineNumber}`);
    if (words.length === 0) continue;
    const [command, ...rest] = words as [string, ...string[]];
    if (command !== 'import' && command !== 'try-import') {
      for (const option of rest) out.push({ source, command, option, line: lineNumber });
      continue;
    }
    const where = `${source}:${lineNumber}`;
    const named = rest.length === 1 ? importPath(rest[0]!, ctx) : undefined;
    if (named === undefined) {
      throw new UsageError(`${where}: Invalid import declaration in config file '${source}': '${line}' (are you in your source checkout/WORKSPACE?)`);
    }
    const target = canonical(named);
    if (stack.includes(target)) {
      throw new UsageError(`${where}: Import loop detected:\n${[...stack, target].map((p) => `  ${p}`).join('\n')}`);
    }
    if (stack.length >= IMPORT_DEPTH_LIMIT) throw new UsageError(`${where}: Import depth exceeded the limit of ${IMPORT_DEPTH_LIMIT}`);
    const imported = readText(named);
    if (imported === undefined) {
      // try-import skips a file it cannot read; a file that is there but malformed is still an error.
      if (command === 'try-import') continue;
      throw new UsageError(`${where}: Unexpected error reading config file '${named}': No such file or directory`);
    }
    parseInto(named, imported, ctx, [...stack, target], out);
  }
}

/** `%workspace%/x` (only as a prefix, as Bazel's WorkspaceRelativizeRcFilePath) and relative paths made absolute; undefined when `%workspace%` has no workspace. */
function importPath(word: string, ctx: RcReadContext): string | undefined {
  if (word.startsWith('%workspace%')) {
    if (ctx.workspaceRoot === undefined) return undefined;
    return ctx.workspaceRoot + word.slice('%workspace%'.length);
  }
  return isAbsolute(word) ? word : resolve(ctx.cwd, word);
}

/** `${NAME}` becomes the variable's value when it is set and not empty; otherwise the text stays (present-day rc_file.cc). */
function expandEnvironment(line: string, env: Readonly<Record<string, string | undefined>>): string {
  return line.replace(/\$\{(.*?)\}/g, (whole, name: string) => {
    const value = env[name];
    return value ? value : whole;
  });
}

/**
 * Splits a line as Bazel's blaze_util::Tokenize: whitespace separates words, `'` and `"` group,
 * a backslash takes the next character literally, `#` outside quotes ends the line; empty words
 * vanish. Bazel silently accepts an open quote; Kiln reports it (it always hides a typo).
 */
export function tokenize(line: string, where: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote: string | undefined;
  let escaped = false;
  for (const c of line) {
    if (escaped) {
      word += c;
      escaped = false;
    } else if (c === '\\') escaped = true;
    else if (quote !== undefined) {
      if (c === quote) quote = undefined;
      else word += c;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#') break;
    else if (/\s/.test(c)) {
      if (word !== '') words.push(word);
      word = '';
    } else word += c;
  }
  if (quote !== undefined) throw new UsageError(`${where}: unterminated quotation`);
  if (word !== '') words.push(word);
  return words;
}
