import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

interface Pattern {
  readonly what: string;
  readonly pattern: RegExp;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...sourceFiles(full));
    else if (name.endsWith('.ts')) out.push(full);
  }
  return out;
}

/** `path:line: what` for every line of the TypeScript sources under `dirs` (but `except`) matching a pattern. */
function linesMatching(dirs: readonly string[], patterns: readonly Pattern[], except: readonly string[] = []): string[] {
  const found: string[] = [];
  for (const dir of dirs) {
    for (const file of sourceFiles(join(ROOT, dir))) {
      const path = relative(ROOT, file);
      if (except.includes(path)) continue;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          for (const { what, pattern } of patterns) if (pattern.test(line)) found.push(`${path}:${i + 1}: ${what}`);
        });
    }
  }
  return found;
}

describe('one canonical label type', () => {
  it('no source file outside the label parser takes labels apart with string searches or regexes', () => {
    const handParsing: Pattern[] = [
      { what: "lastIndexOf(':')", pattern: /lastIndexOf\(':'\)/ },
      { what: "indexOf('//')", pattern: /indexOf\('\/\/'\)/ },
      { what: 'a label regex', pattern: /\(\?:@\(\[\^\/\]\*\)\)\?\\\/\\\// },
    ];
    // The label parser, and the target-pattern parser (`//a/...`, `:all` are a grammar of their own).
    const parsers = ['src/loading/label.ts', 'src/query/target-pattern.ts'];
    expect(linesMatching(['src'], handParsing, parsers)).toEqual([]);
  });
});

describe('errors are never mutated', () => {
  it('no source file assigns to an error message or stack (context is added by a new error with `cause`)', () => {
    const mutation: Pattern[] = [
      { what: 'assigns .message', pattern: /\.message\s*(\+=|=(?!=))/ },
      { what: 'assigns .stack', pattern: /\.stack\s*(\+=|=(?!=))/ },
    ];
    expect(linesMatching(['src', 'scheduler', 'executor'], mutation)).toEqual([]);
  });
});
