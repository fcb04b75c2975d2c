import type { Position } from '../../core/index.js';
import type {
  Argument,
  AugmentedOp,
  BinaryOp,
  Comprehension,
  DefStmt,
  DictEntry,
  DictExpr,
  Expr,
  File,
  ForClause,
  ForStmt,
  Identifier,
  IfClause,
  IfStmt,
  LambdaExpr,
  ListExpr,
  LoadStmt,
  Param,
  Stmt,
  StringLiteral,
  UnaryOp,
  WhileStmt,
} from './ast.js';
import { Scanner } from './scanner.js';
import { describeToken, Token } from './token.js';

/**
 * How deeply constructs may nest (brackets, unary operators, blocks, lambdas), and how deep an
 * expression tree may grow, so that no later recursive pass can exhaust the JavaScript stack.
 */
const MAX_NESTING = 200;
const MAX_EXPR_DEPTH = 1000;

// Precedence levels, lowest first: or, and, not (prefix), comparisons, |, ^, &, << >>, + -, * / // %.
const PREC_OR = 0;
const PREC_NOT = 2;
const PREC_COMPARE = 3;

/** Binding power of each binary operator token; -1 for tokens that are not binary operators. */
const PRECEDENCE: Int8Array = (() => {
  const prec = new Int8Array(Token.NOT_IN + 1).fill(-1);
  const levels: Token[][] = [
    [Token.OR],
    [Token.AND],
    [Token.NOT],
    [Token.EQL, Token.NEQ, Token.LT, Token.GT, Token.LE, Token.GE, Token.IN, Token.NOT_IN],
    [Token.PIPE],
    [Token.CIRCUMFLEX],
    [Token.AMP],
    [Token.LTLT, Token.GTGT],
    [Token.MINUS, Token.PLUS],
    [Token.STAR, Token.PERCENT, Token.SLASH, Token.SLASHSLASH],
  ];
  levels.forEach((tokens, level) => tokens.forEach((t) => (prec[t] = level)));
  prec[Token.NOT] = -1; // `not` is a prefix operator; its level is PREC_NOT
  return prec;
})();

const BINARY_OP = new Map<Token, BinaryOp>([
  [Token.OR, 'or'],
  [Token.AND, 'and'],
  [Token.EQL, '=='],
  [Token.NEQ, '!='],
  [Token.LT, '<'],
  [Token.GT, '>'],
  [Token.LE, '<='],
  [Token.GE, '>='],
  [Token.IN, 'in'],
  [Token.NOT_IN, 'not in'],
  [Token.PIPE, '|'],
  [Token.CIRCUMFLEX, '^'],
  [Token.AMP, '&'],
  [Token.LTLT, '<<'],
  [Token.GTGT, '>>'],
  [Token.MINUS, '-'],
  [Token.PLUS, '+'],
  [Token.STAR, '*'],
  [Token.PERCENT, '%'],
  [Token.SLASH, '/'],
  [Token.SLASHSLASH, '//'],
]);

const AUGMENTED_OP = new Map<Token, AugmentedOp>([
  [Token.PLUS_EQ, '+'],
  [Token.MINUS_EQ, '-'],
  [Token.STAR_EQ, '*'],
  [Token.SLASH_EQ, '/'],
  [Token.SLASHSLASH_EQ, '//'],
  [Token.PERCENT_EQ, '%'],
  [Token.AMP_EQ, '&'],
  [Token.PIPE_EQ, '|'],
  [Token.CIRCUMFLEX_EQ, '^'],
  [Token.LTLT_EQ, '<<'],
  [Token.GTGT_EQ, '>>'],
]);

/** Parses a whole Starlark file. Throws StarlarkSyntaxError at the first error. */
export function parseFile(source: string, filename: string): File {
  return new Parser(source, filename).parseFile();
}

/**
 * Parses one expression (a comma-separated list is a tuple), optionally followed by a newline.
 * Useful for REPLs and tests. Throws StarlarkSyntaxError at the first error.
 */
export function parseExpression(source: string, filename: string): Expr {
  return new Parser(source, filename).parseLoneExpr();
}

/** A recursive-descent parser over the Scanner, following the grammar of the Starlark spec. */
class Parser {
  private readonly sc: Scanner;
  private tok: Token;
  private nesting = 0;
  private exprDepth = 0;

  constructor(source: string, filename: string) {
    this.sc = new Scanner(source, filename);
    this.tok = this.sc.next();
  }

  parseFile(): File {
    const pos: Position = { file: this.sc.file, line: 1, col: 1 };
    const stmts: Stmt[] = [];
    while (this.peek() !== Token.EOF) {
      if (this.peek() === Token.NEWLINE) {
        this.next();
        continue;
      }
      this.parseStmt(stmts);
    }
    return { kind: 'File', pos, path: this.sc.file, stmts, module: null };
  }

  parseLoneExpr(): Expr {
    const x = this.parseExpr(false);
    if (this.peek() === Token.NEWLINE) this.next();
    if (this.peek() !== Token.EOF) this.error(`got ${this.describe()} after expression, want EOF`);
    return x;
  }

  // --- helpers -------------------------------------------------------------------------------

  /** The current token (a method, so TypeScript does not narrow it across calls that advance). */
  private peek(): Token {
    return this.tok;
  }

  private next(): void {
    this.tok = this.sc.next();
  }

  private pos(): Position {
    return this.sc.pos();
  }

  private describe(): string {
    return describeToken(this.peek(), this.sc.value as string | undefined);
  }

  private error(message: string, pos?: Position): never {
    if (pos) this.sc.error(message, pos.line, pos.col);
    this.sc.error(message);
  }

  /** Requires the current token to be `t` and consumes it. */
  private expect(t: Token): void {
    if (this.peek() !== t) this.error(`got ${this.describe()}, want ${describeToken(t)}`);
    this.next();
  }

  /** As expect, returning the token's position. */
  private consume(t: Token): Position {
    if (this.peek() !== t) this.error(`got ${this.describe()}, want ${describeToken(t)}`);
    const pos = this.pos();
    this.next();
    return pos;
  }

  private enter(): void {
    if (++this.nesting > MAX_NESTING) this.error('code nested too deeply');
  }

  // --- statements ----------------------------------------------------------------------------

  private parseStmt(stmts: Stmt[]): void {
    switch (this.peek()) {
      case Token.DEF:
        stmts.push(this.parseDefStmt());
        return;
      case Token.IF:
        stmts.push(this.parseIfStmt());
        return;
      case Token.FOR:
        stmts.push(this.parseForStmt());
        return;
      case Token.WHILE:
        stmts.push(this.parseWhileStmt());
        return;
    }
    this.parseSimpleStmt(stmts);
  }

  private parseDefStmt(): DefStmt {
    const pos = this.pos();
    this.next(); // def
    const name = this.parseIdent();
    this.expect(Token.LPAREN);
    const params = this.parseParams();
    this.expect(Token.RPAREN);
    this.expect(Token.COLON);
    const body = this.parseSuite();
    return { kind: 'DefStmt', pos, name, params, body, fn: null };
  }

  private parseIfStmt(): IfStmt {
    const pos = this.pos();
    const elif = this.peek() === Token.ELIF;
    this.next(); // if or elif
    const cond = this.parseTest();
    this.expect(Token.COLON);
    const then = this.parseSuite();
    let orelse: Stmt[] = [];
    if (this.peek() === Token.ELIF) {
      orelse = [this.parseIfStmt()];
    } else if (this.peek() === Token.ELSE) {
      this.next();
      this.expect(Token.COLON);
      orelse = this.parseSuite();
    }
    return { kind: 'IfStmt', pos, elif, cond, then, orelse };
  }

  private parseForStmt(): ForStmt {
    const pos = this.pos();
    this.next(); // for
    const vars = this.parseForLoopVariables();
    this.expect(Token.IN);
    const iterable = this.parseExpr(false);
    this.expect(Token.COLON);
    const body = this.parseSuite();
    return { kind: 'ForStmt', pos, vars, iterable, body };
  }

  private parseWhileStmt(): WhileStmt {
    const pos = this.pos();
    this.next(); // while
    const cond = this.parseTest();
    this.expect(Token.COLON);
    const body = this.parseSuite();
    return { kind: 'WhileStmt', pos, cond, body };
  }

  /** `a`, `a.b`, `a[i]`, or `a, b[i], c` (an unparenthesized tuple) as in `for ... in`. */
  private parseForLoopVariables(): Expr {
    const first = this.parsePrimaryWithSuffix();
    if (this.peek() !== Token.COMMA) return first;
    const elems = [first];
    while (this.peek() === Token.COMMA) {
      this.next();
      if (terminatesExprList(this.peek())) break;
      elems.push(this.parsePrimaryWithSuffix());
    }
    return { kind: 'TupleExpr', pos: first.pos, parenthesized: false, elems };
  }

  /** small_stmt {';' small_stmt} [';'] NEWLINE */
  private parseSimpleStmt(stmts: Stmt[]): void {
    for (;;) {
      stmts.push(this.parseSmallStmt());
      if (this.peek() !== Token.SEMI) break;
      this.next();
      if (this.peek() === Token.NEWLINE || this.peek() === Token.EOF) break;
    }
    if (this.peek() !== Token.EOF) this.expect(Token.NEWLINE);
  }

  private parseSmallStmt(): Stmt {
    switch (this.peek()) {
      case Token.RETURN: {
        const pos = this.pos();
        this.next();
        let result: Expr | null = null;
        if (this.peek() !== Token.EOF && this.peek() !== Token.NEWLINE && this.peek() !== Token.SEMI) {
          result = this.parseExpr(false);
        }
        return { kind: 'ReturnStmt', pos, result };
      }
      case Token.BREAK: {
        const pos = this.pos();
        this.next();
        return { kind: 'BreakStmt', pos };
      }
      case Token.CONTINUE: {
        const pos = this.pos();
        this.next();
        return { kind: 'ContinueStmt', pos };
      }
      case Token.PASS: {
        const pos = this.pos();
        this.next();
        return { kind: 'PassStmt', pos };
      }
      case Token.LOAD:
        return this.parseLoadStmt();
    }
    const lhs = this.parseExpr(false);
    const pos = lhs.pos;
    if (this.peek() === Token.EQ) {
      const opPos = this.pos();
      this.next();
      const rhs = this.parseExpr(false);
      return { kind: 'AssignStmt', pos, opPos, lhs, rhs };
    }
    const op = AUGMENTED_OP.get(this.peek());
    if (op !== undefined) {
      const opPos = this.pos();
      this.next();
      const rhs = this.parseExpr(false);
      return { kind: 'AugAssignStmt', pos, opPos, op, lhs, rhs };
    }
    return { kind: 'ExprStmt', pos, expr: lhs };
  }

  private parseLoadStmt(): LoadStmt {
    const pos = this.pos();
    this.next(); // load
    const lparen = this.consume(Token.LPAREN);
    if (this.peek() !== Token.STRING) this.error('first operand of load statement must be a string literal');
    const module = this.parseStringLiteral();
    const from: Identifier[] = [];
    const to: Identifier[] = [];
    while (this.peek() !== Token.RPAREN && this.peek() !== Token.EOF) {
      this.expect(Token.COMMA);
      if (this.peek() === Token.RPAREN) break; // trailing comma
      if (this.peek() === Token.STRING) {
        const lit = this.parseStringLiteral();
        const at = { file: lit.pos.file, line: lit.pos.line, col: lit.pos.col + 1 };
        to.push({ kind: 'Identifier', pos: at, name: lit.value, binding: null });
        from.push({ kind: 'Identifier', pos: at, name: lit.value, binding: null });
      } else if (this.peek() === Token.IDENT) {
        const id = this.parseIdent();
        if (this.peek() !== Token.EQ) {
          this.error(`load operand must be "${id.name}" or ${id.name}="originalname" (want '=' after ${id.name})`);
        }
        this.next();
        if (this.peek() !== Token.STRING) {
          this.error(`original name of loaded symbol must be quoted: ${id.name}="originalname"`);
        }
        const lit = this.parseStringLiteral();
        to.push(id);
        from.push({
          kind: 'Identifier',
          pos: { file: lit.pos.file, line: lit.pos.line, col: lit.pos.col + 1 },
          name: lit.value,
          binding: null,
        });
      } else {
        this.error(`load operand must be "name" or localname="name" (got ${this.describe()})`);
      }
    }
    const rparen = this.consume(Token.RPAREN);
    if (to.length === 0) this.error('load statement must import at least 1 symbol', lparen);
    return { kind: 'LoadStmt', pos, module, from, to, rparen };
  }

  /** An indented block after ':' or a simple statement on the same line. */
  private parseSuite(): Stmt[] {
    const stmts: Stmt[] = [];
    if (this.peek() === Token.NEWLINE) {
      this.enter();
      this.next();
      this.expect(Token.INDENT);
      while (this.peek() !== Token.OUTDENT && this.peek() !== Token.EOF) this.parseStmt(stmts);
      this.expect(Token.OUTDENT);
      this.nesting--;
      return stmts;
    }
    this.parseSimpleStmt(stmts);
    return stmts;
  }

  private parseIdent(): Identifier {
    if (this.peek() !== Token.IDENT) this.error('not an identifier');
    const id: Identifier = { kind: 'Identifier', pos: this.pos(), name: this.sc.value as string, binding: null };
    this.next();
    return id;
  }

  private parseStringLiteral(): StringLiteral {
    const lit: StringLiteral = {
      kind: 'StringLiteral',
      pos: this.pos(),
      value: this.sc.value as string,
      raw: this.sc.raw(),
    };
    this.next();
    return lit;
  }

  /** Parameters of a def or lambda, up to ')' or ':'. Their order rules are checked by the resolver. */
  private parseParams(): Param[] {
    const params: Param[] = [];
    while (this.peek() !== Token.RPAREN && this.peek() !== Token.COLON && this.peek() !== Token.EOF) {
      if (params.length > 0) this.expect(Token.COMMA);
      if (this.peek() === Token.RPAREN) break;
      const pos = this.pos();
      if (this.peek() === Token.STAR || this.peek() === Token.STARSTAR) {
        const starstar = this.peek() === Token.STARSTAR;
        this.next();
        const name = starstar || this.peek() === Token.IDENT ? this.parseIdent() : null;
        params.push({ kind: 'Param', pos, mode: starstar ? 'starstar' : 'star', name, default: null });
        continue;
      }
      const name = this.parseIdent();
      if (this.peek() === Token.EQ) {
        this.next();
        const dflt = this.parseTest();
        params.push({ kind: 'Param', pos, mode: 'default', name, default: dflt });
        continue;
      }
      params.push({ kind: 'Param', pos, mode: 'plain', name, default: null });
    }
    return params;
  }

  // --- expressions ---------------------------------------------------------------------------

  /** test {',' test}: several make an unparenthesized tuple. */
  private parseExpr(inParens: boolean): Expr {
    const x = this.parseTest();
    if (this.peek() !== Token.COMMA) return x;
    const elems = this.parseExprs([x], inParens);
    return { kind: 'TupleExpr', pos: x.pos, parenthesized: false, elems };
  }

  private parseExprs(elems: Expr[], allowTrailingComma: boolean): Expr[] {
    while (this.peek() === Token.COMMA) {
      const comma = this.pos();
      this.next();
      if (terminatesExprList(this.peek())) {
        if (!allowTrailingComma) this.error('unparenthesized tuple with trailing comma', comma);
        break;
      }
      elems.push(this.parseTest());
    }
    return elems;
  }

  /** A full expression without tuples: lambda, conditional, or binary. */
  private parseTest(): Expr {
    this.enter();
    let x: Expr;
    if (this.peek() === Token.LAMBDA) {
      x = this.parseLambda(true);
    } else {
      x = this.parseBinary(PREC_OR);
      if (this.peek() === Token.IF) {
        const ifPos = this.pos();
        this.next();
        const cond = this.parseBinary(PREC_OR);
        if (this.peek() !== Token.ELSE) this.error('conditional expression without else clause', ifPos);
        this.next();
        const orelse = this.parseTest();
        x = { kind: 'CondExpr', pos: x.pos, ifPos, cond, then: x, orelse };
      }
    }
    this.nesting--;
    return x;
  }

  /** As parseTest, but a conditional is not allowed (comprehension `if` clauses, lambda bodies there). */
  private parseTestNoCond(): Expr {
    if (this.peek() === Token.LAMBDA) {
      this.enter();
      const x = this.parseLambda(false);
      this.nesting--;
      return x;
    }
    return this.parseBinary(PREC_OR);
  }

  private parseLambda(allowCond: boolean): LambdaExpr {
    const pos = this.pos();
    this.next(); // lambda
    const params = this.peek() !== Token.COLON ? this.parseParams() : [];
    this.expect(Token.COLON);
    const body = allowCond ? this.parseTest() : this.parseTestNoCond();
    return { kind: 'LambdaExpr', pos, params, body, fn: null };
  }

  /**
   * Binary operators by precedence climbing: parses operators binding at least as tightly as
   * `minPrec`. Comparisons do not associate: `a < b < c` is an error.
   */
  private parseBinary(minPrec: number): Expr {
    let x: Expr;
    if (this.peek() === Token.NOT && minPrec <= PREC_NOT) {
      const pos = this.pos();
      this.enter();
      this.next();
      const operand = this.parseBinary(PREC_NOT);
      this.nesting--;
      x = { kind: 'UnaryExpr', pos, op: 'not', x: operand };
    } else {
      x = this.parsePrimaryWithSuffix();
    }
    const savedDepth = this.exprDepth;
    let lastWasComparison = false;
    for (;;) {
      if (this.peek() === Token.NOT) {
        // `not in`: a two-token operator.
        const notPos = this.pos();
        this.next();
        if (this.peek() !== Token.IN) this.error(`got ${this.describe()}, want in`);
        this.tok = Token.NOT_IN;
        this.notInPos = notPos;
      }
      const prec = PRECEDENCE[this.peek()]!;
      if (prec < minPrec) break;
      if (prec === PREC_COMPARE && lastWasComparison) {
        const prev = (x as { op: string }).op;
        this.error(`${prev} does not associate with ${BINARY_OP.get(this.peek())} (use parens)`, this.opPos());
      }
      const opTok = this.peek();
      const opPos = this.opPos();
      this.next();
      if (++this.exprDepth > MAX_EXPR_DEPTH) this.error('expression nested too deeply', opPos);
      const y = this.parseBinary(prec + 1);
      x = { kind: 'BinaryExpr', pos: x.pos, opPos, op: BINARY_OP.get(opTok)!, x, y };
      lastWasComparison = prec === PREC_COMPARE;
    }
    this.exprDepth = savedDepth;
    return x;
  }

  private notInPos: Position | null = null;

  /** The current operator's position (for `not in`, the `not`). */
  private opPos(): Position {
    if (this.peek() === Token.NOT_IN && this.notInPos) return this.notInPos;
    return this.pos();
  }

  private parsePrimaryWithSuffix(): Expr {
    let x = this.parsePrimary();
    const savedDepth = this.exprDepth;
    for (;;) {
      switch (this.peek()) {
        case Token.DOT: {
          const dot = this.pos();
          this.next();
          const name = this.parseIdent();
          x = { kind: 'DotExpr', pos: x.pos, dot, x, name };
          break;
        }
        case Token.LBRACK:
          x = this.parseSliceSuffix(x);
          break;
        case Token.LPAREN:
          x = this.parseCallSuffix(x);
          break;
        default:
          this.exprDepth = savedDepth;
          return x;
      }
      if (++this.exprDepth > MAX_EXPR_DEPTH) this.error('expression nested too deeply');
    }
  }

  private parseSliceSuffix(x: Expr): Expr {
    const lbrack = this.pos();
    this.next();
    let lo: Expr | null = null;
    let hi: Expr | null = null;
    let step: Expr | null = null;
    if (this.peek() !== Token.COLON) {
      const y = this.parseExpr(false);
      if (this.peek() === Token.RBRACK) {
        this.next();
        return { kind: 'IndexExpr', pos: x.pos, lbrack, x, index: y };
      }
      lo = y;
    }
    if (this.peek() === Token.COLON) {
      this.next();
      if (this.peek() !== Token.COLON && this.peek() !== Token.RBRACK) hi = this.parseTest();
    }
    if (this.peek() === Token.COLON) {
      this.next();
      if (this.peek() !== Token.RBRACK) step = this.parseTest();
    }
    this.expect(Token.RBRACK);
    return { kind: 'SliceExpr', pos: x.pos, lbrack, x, lo, hi, step };
  }

  private parseCallSuffix(fn: Expr): Expr {
    const lparen = this.consume(Token.LPAREN);
    const args: Argument[] = [];
    while (this.peek() !== Token.RPAREN && this.peek() !== Token.EOF) {
      if (args.length > 0) this.expect(Token.COMMA);
      if (this.peek() === Token.RPAREN) break;
      if (this.peek() === Token.STAR || this.peek() === Token.STARSTAR) {
        const pos = this.pos();
        const mode = this.peek() === Token.STAR ? 'star' : 'starstar';
        this.next();
        args.push({ kind: 'Argument', pos, mode, name: null, value: this.parseTest() });
        continue;
      }
      const x = this.parseTest();
      if (this.peek() === Token.EQ) {
        if (x.kind !== 'Identifier') this.error('keyword argument must have form name=expr');
        this.next();
        args.push({ kind: 'Argument', pos: x.pos, mode: 'keyword', name: x, value: this.parseTest() });
        continue;
      }
      args.push({ kind: 'Argument', pos: x.pos, mode: 'positional', name: null, value: x });
    }
    const rparen = this.consume(Token.RPAREN);
    return { kind: 'CallExpr', pos: fn.pos, lparen, fn, args, rparen };
  }

  private parsePrimary(): Expr {
    if (this.peek() === Token.IDENT) return this.parseIdent();
    const pos = this.pos();
    switch (this.peek()) {
      case Token.INT: {
        const lit: Expr = { kind: 'IntLiteral', pos, value: this.sc.value as number | bigint, raw: this.sc.raw() };
        this.next();
        return lit;
      }
      case Token.FLOAT: {
        const lit: Expr = { kind: 'FloatLiteral', pos, value: this.sc.value as number, raw: this.sc.raw() };
        this.next();
        return lit;
      }
      case Token.STRING: {
        const lit: Expr = { kind: 'StringLiteral', pos, value: this.sc.value as string, raw: this.sc.raw() };
        this.next();
        return lit;
      }
      case Token.BYTES: {
        const lit: Expr = { kind: 'BytesLiteral', pos, value: this.sc.value as Uint8Array, raw: this.sc.raw() };
        this.next();
        return lit;
      }
      case Token.LBRACK:
        return this.parseList();
      case Token.LBRACE:
        return this.parseDict();
      case Token.LPAREN: {
        this.next();
        if (this.peek() === Token.RPAREN) {
          this.next();
          return { kind: 'TupleExpr', pos, parenthesized: true, elems: [] };
        }
        const x = this.parseExpr(true);
        this.expect(Token.RPAREN);
        if (x.kind === 'TupleExpr' && !x.parenthesized) {
          return { kind: 'TupleExpr', pos, parenthesized: true, elems: x.elems };
        }
        return { kind: 'ParenExpr', pos, x };
      }
      case Token.MINUS:
      case Token.PLUS:
      case Token.TILDE: {
        const op: UnaryOp = this.peek() === Token.MINUS ? '-' : this.peek() === Token.PLUS ? '+' : '~';
        this.enter();
        this.next();
        const x = this.parsePrimaryWithSuffix();
        this.nesting--;
        return { kind: 'UnaryExpr', pos, op, x };
      }
    }
    this.error(`got ${this.describe()}, want primary expression`);
  }

  private parseList(): Expr {
    const pos = this.pos();
    this.next(); // [
    if (this.peek() === Token.RBRACK) {
      this.next();
      return { kind: 'ListExpr', pos, elems: [] } satisfies ListExpr;
    }
    const x = this.parseTest();
    if (this.peek() === Token.FOR) return this.parseComprehensionSuffix(pos, x, false);
    const elems = this.peek() === Token.COMMA ? this.parseExprs([x], true) : [x];
    this.expect(Token.RBRACK);
    return { kind: 'ListExpr', pos, elems };
  }

  private parseDict(): Expr {
    const pos = this.pos();
    this.next(); // {
    if (this.peek() === Token.RBRACE) {
      this.next();
      return { kind: 'DictExpr', pos, entries: [] } satisfies DictExpr;
    }
    const first = this.parseDictEntry();
    if (this.peek() === Token.FOR) return this.parseComprehensionSuffix(pos, first, true);
    const entries = [first];
    while (this.peek() === Token.COMMA) {
      this.next();
      if (this.peek() === Token.RBRACE) break;
      entries.push(this.parseDictEntry());
    }
    this.expect(Token.RBRACE);
    return { kind: 'DictExpr', pos, entries };
  }

  private parseDictEntry(): DictEntry {
    const key = this.parseTest();
    const colon = this.consume(Token.COLON);
    const value = this.parseTest();
    return { kind: 'DictEntry', pos: key.pos, colon, key, value };
  }

  private parseComprehensionSuffix(pos: Position, body: Expr | DictEntry, curly: boolean): Comprehension {
    const end = curly ? Token.RBRACE : Token.RBRACK;
    const clauses: (ForClause | IfClause)[] = [];
    while (this.peek() !== end) {
      const clausePos = this.pos();
      if (this.peek() === Token.FOR) {
        this.next();
        const vars = this.parseForLoopVariables();
        this.expect(Token.IN);
        const iterable = this.parseBinary(PREC_OR);
        clauses.push({ kind: 'ForClause', pos: clausePos, vars, iterable });
      } else if (this.peek() === Token.IF) {
        this.next();
        clauses.push({ kind: 'IfClause', pos: clausePos, cond: this.parseTestNoCond() });
      } else {
        this.error(`got ${this.describe()}, want ${describeToken(end)}, for, or if`);
      }
    }
    this.next();
    return { kind: 'Comprehension', pos, curly, body, clauses };
  }
}

function terminatesExprList(tok: Token): boolean {
  switch (tok) {
    case Token.EOF:
    case Token.NEWLINE:
    case Token.EQ:
    case Token.RBRACE:
    case Token.RBRACK:
    case Token.RPAREN:
    case Token.SEMI:
      return true;
  }
  return false;
}
