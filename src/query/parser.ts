import { QUERY_FUNCTIONS, type ArgumentType, type QueryFunction } from './functions/index.js';
import { QuerySyntaxError, tokenize, type Token, type TokenKind } from './lexer.js';

export type SetOperator = 'union' | 'except' | 'intersect';

/** A function argument as its declared type wants it. */
export type QueryArgument =
  | { readonly kind: 'expression'; readonly expr: QueryExpr }
  | { readonly kind: 'word'; readonly text: string }
  | { readonly kind: 'integer'; readonly value: number };

/** The query expression tree (Bazel's query language, revision 2). `column` is 1-based. */
export type QueryExpr =
  | { readonly kind: 'target'; readonly text: string; readonly column: number }
  | { readonly kind: 'variable'; readonly name: string; readonly column: number }
  | { readonly kind: 'let'; readonly name: string; readonly value: QueryExpr; readonly body: QueryExpr }
  | { readonly kind: 'function'; readonly name: string; readonly args: readonly QueryArgument[]; readonly column: number }
  | { readonly kind: 'binary'; readonly op: SetOperator; readonly operands: readonly QueryExpr[] }
  | { readonly kind: 'set'; readonly words: readonly { readonly text: string; readonly column: number }[] };

const OPERATORS: Partial<Record<TokenKind, SetOperator>> = {
  '+': 'union',
  union: 'union',
  '-': 'except',
  except: 'except',
  '^': 'intersect',
  intersect: 'intersect',
};
const VARIABLE_NAME = /^[A-Za-z0-9_]+$/;

/**
 * Parses a query. All set operators have the same precedence and associate to the left (Bazel's
 * QueryParser: `a + b ^ c` is `(a + b) ^ c`); `let x = e1 in e2` extends as far right as it can.
 * `functions` are the functions the query's environment offers (genquery's has fewer).
 */
export function parseQuery(query: string, functions: ReadonlyMap<string, QueryFunction> = QUERY_FUNCTIONS): QueryExpr {
  const tokens = tokenize(query);
  let pos = 0;
  const peek = (): Token => tokens[pos]!;
  const fail = (t: Token, message?: string): never => {
    const where = t.kind === 'eof' ? 'premature end of input' : `syntax error at '${context(tokens, pos)}' (column ${t.column})`;
    throw new QuerySyntaxError(`Error while parsing '${query}': ${message ?? where}`);
  };
  const consume = (kind: TokenKind): Token => {
    const t = peek();
    if (t.kind !== kind) fail(t);
    pos++;
    return t;
  };

  const targetLiteral = (t: Token): QueryExpr => {
    if (t.text.startsWith('$')) return { kind: 'variable', name: t.text.slice(1), column: t.column };
    // Bazel: unquoted words may not start with a hyphen or asterisk.
    if (t.text.startsWith('-') || t.text.startsWith('*')) fail(t, `target literal must not begin with (${t.text[0]}): ${t.text} (column ${t.column})`);
    return { kind: 'target', text: t.text, column: t.column };
  };

  const primary = (): QueryExpr => {
    const t = peek();
    switch (t.kind) {
      case 'word': {
        pos++;
        if (peek().kind !== '(') return targetLiteral(t);
        const fn = functions.get(t.text);
        if (!fn) return fail(t, `unknown function '${t.text}' (column ${t.column})`);
        const args: QueryArgument[] = [];
        let separator: TokenKind = '(';
        for (const type of fn.argumentTypes) {
          if (peek().kind === ')' && args.length >= fn.mandatoryArguments) break;
          consume(separator);
          separator = ',';
          args.push(argument(type));
        }
        consume(')');
        return { kind: 'function', name: fn.name, args, column: t.column };
      }
      case 'let': {
        pos++;
        const name = consume('word');
        if (!VARIABLE_NAME.test(name.text)) fail(name, `invalid variable name '${name.text}' in let expression (column ${name.column})`);
        consume('=');
        const value = expr();
        consume('in');
        return { kind: 'let', name: name.text, value, body: expr() };
      }
      case '(': {
        pos++;
        const inner = expr();
        consume(')');
        return inner;
      }
      case 'set': {
        pos++;
        consume('(');
        const words: { text: string; column: number }[] = [];
        while (peek().kind === 'word') {
          const w = peek();
          pos++;
          if (targetLiteral(w).kind !== 'target') fail(w, `set() takes target patterns, not variables: '${w.text}' (column ${w.column})`);
          words.push({ text: w.text, column: w.column });
        }
        consume(')');
        return { kind: 'set', words };
      }
      default:
        return fail(t);
    }
  };

  const argument = (type: ArgumentType): QueryArgument => {
    switch (type) {
      case 'expression':
        return { kind: 'expression', expr: expr() };
      case 'word':
        return { kind: 'word', text: consume('word').text };
      case 'integer': {
        const t = consume('word');
        if (!/^[0-9]+$/.test(t.text) || Number(t.text) > 2 ** 31 - 1) fail(t, `expected an integer literal: '${t.text}' (column ${t.column})`);
        return { kind: 'integer', value: Number(t.text) };
      }
    }
  };

  const expr = (): QueryExpr => {
    let left = primary();
    const first = OPERATORS[peek().kind];
    if (first === undefined) return left;
    let op: SetOperator = first;
    let operands: QueryExpr[] = [left];
    for (let next = first as SetOperator | undefined; next !== undefined; next = OPERATORS[peek().kind]) {
      pos++;
      if (next !== op) {
        left = { kind: 'binary', op, operands };
        operands = [left];
        op = next;
      }
      operands.push(primary());
    }
    return { kind: 'binary', op, operands };
  };

  const whole = expr();
  if (peek().kind !== 'eof') fail(peek());
  return whole;
}

/** Up to three tokens from `pos`, as Bazel's syntax errors show them. */
function context(tokens: readonly Token[], pos: number): string {
  return tokens
    .slice(pos, Math.min(tokens.length - 1, pos + 3))
    .map((t) => t.text)
    .join(' ');
}
