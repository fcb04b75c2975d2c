import { Scanner, StarlarkSyntaxError, Token, describeToken } from '../../../src/starlark/syntax/index.js';

/** Scans `src` to a space-separated token list (values shown decoded), or the formatted error. */
export function scanToString(src: string, file = 'foo.star'): string {
  const sc = new Scanner(src, file);
  const out: string[] = [];
  // Every token but the closing NEWLINE and DEDENTs consumes input: a scanner that stops advancing
  // fails here instead of hanging.
  const maxTokens = 4 * src.length + 100;
  try {
    while (out.length < maxTokens) {
      const tok = sc.next();
      out.push(showToken(sc, tok));
      if (tok === Token.EOF) return out.join(' ');
    }
  } catch (e) {
    if (e instanceof StarlarkSyntaxError) return e.format();
    throw e;
  }
  throw new Error(`the scanner did not reach EOF within ${maxTokens} tokens`);
}

function showToken(sc: Scanner, tok: Token): string {
  switch (tok) {
    case Token.IDENT:
    case Token.RESERVED:
      return sc.value as string;
    case Token.INT:
      return String(sc.value);
    case Token.FLOAT:
      return `float(${String(sc.value)})`;
    case Token.STRING:
      return JSON.stringify(sc.value);
    case Token.BYTES:
      return `b[${Array.from(sc.value as Uint8Array).join(',')}]`;
    case Token.EOF:
      return 'EOF';
    default:
      return describeToken(tok).replaceAll("'", '');
  }
}
