import { QuerySyntaxError, tokenize, type Token } from './lexer.js';

/** The query expression tree. Functions (deps, rdeps, kind...) join here as new node kinds. */
export type QueryExpr =
  | { readonly kind: 'pattern'; readonly text: string }
  | { readonly kind: 'setop'; readonly op: 'union' | 'except' | 'intersect'; readonly left: QueryExpr; readonly right: QueryExpr };

const OPS: Readonly<Record<string, 'union' | 'except' | 'intersect'>> = {
  '+': 'union',
  union: 'union',
  '-': 'except',
  except: 'except',
  '^': 'intersect',
  intersect: 'intersect',
};

/** Parses Bazel's query syntax: target patterns combined left to right with set operators. */
export function parseQuery(query: string): QueryExpr {
  const tokens = tokenize(query);
  let pos = 0;
  const describe = (t: Token | undefined) => (t === undefined ? 'end of query' : t.kind === 'word' || t.kind === 'op' ? `'${t.text}'` : `'${{ lparen: '(', rparen: ')', comma: ',' }[t.kind]}'`);
  // Bazel 2.1's wording: "Error while parsing '(//a': premature end of input".
  const fail = (t: Token | undefined): never => {
    throw new QuerySyntaxError(
      t === undefined ? `Error while parsing '${query}': premature end of input` : `Error while parsing '${query}': syntax error at ${describe(t)}`,
    );
  };
  const primary = (): QueryExpr => {
    const t = tokens[pos];
    if (t?.kind === 'lparen') {
      pos++;
      const e = expr();
      if (tokens[pos]?.kind !== 'rparen') fail(tokens[pos]);
      pos++;
      return e;
    }
    if (t?.kind === 'word') {
      pos++;
      if (tokens[pos]?.kind === 'lparen') throw new QuerySyntaxError(`query function '${t.text}' is not supported yet; this version evaluates target patterns and set operators`);
      return { kind: 'pattern', text: t.text };
    }
    return fail(t);
  };
  const expr = (): QueryExpr => {
    let left = primary();
    for (;;) {
      const t = tokens[pos];
      if (t?.kind !== 'op') return left;
      pos++;
      left = { kind: 'setop', op: OPS[t.text]!, left, right: primary() };
    }
  };
  const e = expr();
  if (pos < tokens.length) fail(tokens[pos]);
  return e;
}
