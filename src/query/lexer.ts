import { KilnError } from '../core/index.js';

/** A query that cannot be parsed (Bazel exits 2 for these). */
export class QuerySyntaxError extends KilnError {}

export type Token =
  | { readonly kind: 'word'; readonly text: string; readonly offset: number }
  | { readonly kind: 'op'; readonly text: '+' | '-' | '^' | 'union' | 'except' | 'intersect'; readonly offset: number }
  | { readonly kind: 'lparen' | 'rparen' | 'comma'; readonly offset: number };

const OPERATOR_WORDS = new Set(['union', 'except', 'intersect', '+', '-', '^']);

/** Splits a query into words, quoted words, parentheses, commas and set operators. */
export function tokenize(query: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < query.length) {
    const c = query[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (c === '(' || c === ')' || c === ',') {
      out.push({ kind: c === '(' ? 'lparen' : c === ')' ? 'rparen' : 'comma', offset: i });
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      const end = query.indexOf(c, i + 1);
      if (end < 0) throw new QuerySyntaxError(`unclosed quotation at offset ${i} of query '${query}'`);
      out.push({ kind: 'word', text: query.slice(i + 1, end), offset: i });
      i = end + 1;
      continue;
    }
    let j = i;
    while (j < query.length && !' \t\n\r(),"\''.includes(query[j]!)) j++;
    const text = query.slice(i, j);
    if (OPERATOR_WORDS.has(text)) out.push({ kind: 'op', text: text as '+', offset: i });
    else out.push({ kind: 'word', text, offset: i });
    i = j;
  }
  return out;
}
