import { KilnError } from '../core/index.js';

/** A query that cannot be parsed (Bazel exits 2 for these). */
export class QuerySyntaxError extends KilnError {}

export type TokenKind = 'word' | 'eof' | ',' | '=' | '(' | ')' | '-' | '+' | '^' | 'in' | 'let' | 'set' | 'intersect' | 'except' | 'union';

/** One token; `column` is 1-based in the query text. Words keep their text (quotes removed). */
export interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  readonly column: number;
}

const KEYWORDS: ReadonlySet<string> = new Set(['in', 'let', 'set', 'intersect', 'except', 'union']);
const PUNCTUATION: ReadonlySet<string> = new Set([',', '=', '(', ')', '-', '+', '^']);
/** Characters an unquoted word may continue with (Bazel's Lexer.scanWord): labels, patterns, simple regexps. */
const WORD_CHAR = /[A-Za-z0-9*/@.\-_:$~]/;

/**
 * Splits a query as Bazel's lexer does: punctuation, keywords, words (any character that starts no
 * other token begins one, and word characters continue it), and quoted words ('...' or "...", no
 * escapes) that are never keywords.
 */
export function tokenize(query: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < query.length) {
    const c = query[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (PUNCTUATION.has(c)) {
      out.push({ kind: c as TokenKind, text: c, column: i + 1 });
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      const end = query.indexOf(c, i + 1);
      if (end < 0) throw new QuerySyntaxError(`unclosed quotation at column ${i + 1} of query '${query}'`);
      out.push({ kind: 'word', text: query.slice(i + 1, end), column: i + 1 });
      i = end + 1;
      continue;
    }
    let j = i + 1;
    while (j < query.length && WORD_CHAR.test(query[j]!)) j++;
    const text = query.slice(i, j);
    out.push({ kind: KEYWORDS.has(text) ? (text as TokenKind) : 'word', text, column: i + 1 });
    i = j;
  }
  out.push({ kind: 'eof', text: '', column: query.length + 1 });
  return out;
}
