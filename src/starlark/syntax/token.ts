/** Starlark token kinds. The order of the augmented-assignment group matters to the parser. */
export enum Token {
  EOF,
  NEWLINE,
  INDENT,
  OUTDENT,

  IDENT,
  INT,
  FLOAT,
  STRING,
  BYTES,

  // punctuation
  PLUS,
  MINUS,
  STAR,
  SLASH,
  SLASHSLASH,
  PERCENT,
  AMP,
  PIPE,
  CIRCUMFLEX,
  LTLT,
  GTGT,
  TILDE,
  DOT,
  COMMA,
  EQ,
  SEMI,
  COLON,
  LPAREN,
  RPAREN,
  LBRACK,
  RBRACK,
  LBRACE,
  RBRACE,
  LT,
  GT,
  GE,
  LE,
  EQL,
  NEQ,
  PLUS_EQ,
  MINUS_EQ,
  STAR_EQ,
  SLASH_EQ,
  SLASHSLASH_EQ,
  PERCENT_EQ,
  AMP_EQ,
  PIPE_EQ,
  CIRCUMFLEX_EQ,
  LTLT_EQ,
  GTGT_EQ,
  STARSTAR,

  // keywords
  AND,
  BREAK,
  CONTINUE,
  DEF,
  ELIF,
  ELSE,
  FOR,
  IF,
  IN,
  LAMBDA,
  LOAD,
  NOT,
  OR,
  PASS,
  RETURN,
  WHILE,
  /** A word reserved for future use (`class`, `import`, ...); the scanner's value holds the word. */
  RESERVED,
  /** `not in`: synthesized by the parser from NOT IN, never produced by the scanner. */
  NOT_IN,
}

const PUNCTUATION: readonly string[] = [
  '+',
  '-',
  '*',
  '/',
  '//',
  '%',
  '&',
  '|',
  '^',
  '<<',
  '>>',
  '~',
  '.',
  ',',
  '=',
  ';',
  ':',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  '<',
  '>',
  '>=',
  '<=',
  '==',
  '!=',
  '+=',
  '-=',
  '*=',
  '/=',
  '//=',
  '%=',
  '&=',
  '|=',
  '^=',
  '<<=',
  '>>=',
  '**',
];

const KEYWORDS: readonly string[] = [
  'and',
  'break',
  'continue',
  'def',
  'elif',
  'else',
  'for',
  'if',
  'in',
  'lambda',
  'load',
  'not',
  'or',
  'pass',
  'return',
  'while',
];

/**
 * Words the spec reserves. `assert` is deliberately absent, as in starlark-go: test suites use
 * `assert` as the name of their assertion module.
 */
const RESERVED_WORDS: readonly string[] = [
  'as',
  'async',
  'await',
  'class',
  'del',
  'except',
  'finally',
  'from',
  'global',
  'import',
  'is',
  'nonlocal',
  'raise',
  'try',
  'with',
  'yield',
];

/** Keyword and reserved-word lookup by spelling. */
export const KEYWORD_TOKENS: ReadonlyMap<string, Token> = new Map<string, Token>([
  ...KEYWORDS.map((k, i) => [k, Token.AND + i] as [string, Token]),
  ...RESERVED_WORDS.map((k) => [k, Token.RESERVED] as [string, Token]),
]);

/**
 * How a token is named in error messages, as starlark-go names it: punctuation quoted ('+'),
 * keywords bare (lambda), literals by category (string literal).
 */
export function describeToken(tok: Token, reservedWord?: string): string {
  switch (tok) {
    case Token.EOF:
      return 'end of file';
    case Token.NEWLINE:
      return 'newline';
    case Token.INDENT:
      return 'indent';
    case Token.OUTDENT:
      return 'outdent';
    case Token.IDENT:
      return 'identifier';
    case Token.INT:
      return 'int literal';
    case Token.FLOAT:
      return 'float literal';
    case Token.STRING:
      return 'string literal';
    case Token.BYTES:
      return 'bytes literal';
    case Token.RESERVED:
      return reservedWord ?? 'reserved word';
    case Token.NOT_IN:
      return 'not in';
  }
  if (tok >= Token.PLUS && tok <= Token.STARSTAR) return `'${PUNCTUATION[tok - Token.PLUS]}'`;
  return KEYWORDS[tok - Token.AND]!;
}
