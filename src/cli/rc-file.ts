import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { UsageError } from '../core/index.js';

/** One option line of an rc file: `build --x`, `build:name --y`, `common --z`. */
interface RcLine {
  readonly command: string;
  readonly config: string | undefined;
  readonly words: readonly string[];
}

/**
 * Commands whose options a command also takes from rc files, most general first (Bazel's
 * inheritance: `run` and `test` take `build` lines; `info` too, for its per-configuration keys).
 */
const INHERITS: Readonly<Record<string, readonly string[]>> = {
  build: ['common', 'build'],
  run: ['common', 'build', 'run'],
  test: ['common', 'build', 'test'],
  info: ['common', 'build', 'info'],
  clean: ['common', 'build', 'clean'],
  query: ['common', 'query'],
};

/**
 * Reads Bazel-syntax rc files — `%workspace%/.kilnrc`, then `$HOME/.kilnrc` (later wins) — with
 * `import` / `try-import`, and returns the command line with their options in front and every
 * `--config=name` replaced by the `command:name` lines of the commands `command` inherits from.
 * @throws UsageError for an undefined config, a config cycle, or a missing `import`ed file.
 */
export function applyRcFiles(command: string, args: readonly string[], workspaceRoot: string, home: string | undefined): string[] {
  const lines: RcLine[] = [];
  for (const file of [join(workspaceRoot, '.kilnrc'), ...(home ? [join(home, '.kilnrc')] : [])]) readRcFile(file, workspaceRoot, lines, true, new Set());
  const chain = INHERITS[command] ?? ['common', command];
  const linesOf = (config: string | undefined) => chain.flatMap((c) => lines.filter((l) => l.command === c && l.config === config)).flatMap((l) => l.words);

  const expand = (words: readonly string[], seen: readonly string[]): string[] => {
    const out: string[] = [];
    for (let i = 0; i < words.length; i++) {
      const w = words[i]!;
      if (w === '--') {
        for (const rest of words.slice(i)) out.push(rest);
        break;
      }
      let name: string | undefined;
      if (w.startsWith('--config=')) name = w.slice('--config='.length);
      else if (w === '--config') {
        name = words[++i];
        if (name === undefined) throw new UsageError('Expected value after --config');
      }
      if (name === undefined) {
        out.push(w);
        continue;
      }
      if (seen.includes(name)) throw new UsageError(`Config expansion has a cycle: ${[...seen, name].map((n) => `--config=${n}`).join(' -> ')}`);
      if (!lines.some((l) => l.config === name && chain.includes(l.command))) {
        throw new UsageError(`Config value '${name}' is not defined in any .rc file`);
      }
      for (const expanded of expand(linesOf(name), [...seen, name])) out.push(expanded);
    }
    return out;
  };
  return [...expand(linesOf(undefined), []), ...expand(args, [])];
}

function readRcFile(path: string, workspaceRoot: string, into: RcLine[], optional: boolean, importing: Set<string>): void {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    if (optional) return;
    throw new UsageError(`Error while reading rc file: ${path} does not exist`);
  }
  if (importing.has(path)) throw new UsageError(`Import loop detected: ${[...importing, path].join(' -> ')}`);
  importing.add(path);
  // A trailing backslash continues a line, as in Bazel's rc files.
  for (const [index, line] of text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .entries()) {
    const words = tokenize(line, path, index + 1);
    if (words.length === 0) continue;
    const [head, ...rest] = words as [string, ...string[]];
    if (head === 'import' || head === 'try-import') {
      if (rest.length !== 1) throw new UsageError(`${path}:${index + 1}: '${head}' takes exactly one file`);
      const named = rest[0]!.replace('%workspace%', workspaceRoot);
      readRcFile(isAbsolute(named) ? named : join(dirname(path), named), workspaceRoot, into, head === 'try-import', importing);
      continue;
    }
    const colon = head.indexOf(':');
    into.push({ command: colon < 0 ? head : head.slice(0, colon), config: colon < 0 ? undefined : head.slice(colon + 1), words: rest });
  }
  importing.delete(path);
}

/** Splits a line into words: whitespace separates, quotes group, `#` starts a comment. */
function tokenize(line: string, path: string, lineNumber: number): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) word += line[++i]!;
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === '#' && word === undefined) break;
    else word = (word ?? '') + c;
  }
  if (quote) throw new UsageError(`${path}:${lineNumber}: unterminated quotation`);
  if (word !== undefined) words.push(word);
  return words;
}
