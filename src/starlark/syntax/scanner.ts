import type { Position } from '../../core/index.js';
import { StarlarkSyntaxError } from './syntax-error.js';
import { KEYWORD_TOKENS, Token } from './token.js';

// Character codes used by the scanner.
const TAB = 9;
const LF = 10;
const CR = 13;
const SPACE = 32;
const BANG = 33;
const DQUOTE = 34;
const HASH = 35;
const PERCENT = 37;
const AMP = 38;
const SQUOTE = 39;
const LPAREN = 40;
const RPAREN = 41;
const STAR = 42;
const PLUS = 43;
const COMMA = 44;
const MINUS = 45;
const DOT = 46;
const SLASH = 47;
const ZERO = 48;
const SEVEN = 55;
const NINE = 57;
const COLON = 58;
const SEMI = 59;
const LT = 60;
const EQ = 61;
const GT = 62;
const UPPER_A = 65;
const UPPER_Z = 90;
const LBRACK = 91;
const BACKSLASH = 92;
const RBRACK = 93;
const CARET = 94;
const UNDERSCORE = 95;
const LOWER_A = 97;
const LOWER_B = 98;
const LOWER_R = 114;
const LOWER_Z = 122;
const LBRACE = 123;
const PIPE = 124;
const RBRACE = 125;
const TILDE = 126;

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const UNICODE_LETTER = /^\p{L}$/u;
const utf8 = new TextEncoder();

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

function hexValue(c: number): number {
  if (c >= ZERO && c <= NINE) return c - ZERO;
  const l = c | 0x20;
  if (l >= LOWER_A && l <= 102) return l - LOWER_A + 10;
  return -1;
}

/**
 * Turns Starlark source text into tokens, one at a time.
 *
 * The scanner is a cursor: `next()` advances and describes the new token through its public fields
 * (`tok`, `line`, `col`, `value`, ...), so scanning allocates nothing per token beyond the values
 * themselves (identifier names, literal values). Indentation becomes INDENT/OUTDENT tokens; newlines
 * inside brackets and after a backslash are skipped; blank and comment-only lines produce nothing.
 * At EOF the scanner emits a NEWLINE (unless the last line already ended), the pending OUTDENTs, then EOF.
 * Errors throw StarlarkSyntaxError at the offending token.
 */
export class Scanner {
  /** The current token's kind. */
  tok: Token = Token.EOF;
  /** 1-based line and column (UTF-16 units) of the current token's first character. */
  line = 1;
  col = 1;
  /** Offsets of the current token's text in the source: [start, end). */
  start = 0;
  end = 0;
  /**
   * The current token's value: the name (IDENT, RESERVED), the decoded string (STRING),
   * number or bigint (INT), number (FLOAT), Uint8Array (BYTES); undefined otherwise.
   */
  value: string | number | bigint | Uint8Array | undefined = undefined;

  private readonly src: string;
  private readonly n: number;
  private p = 0;
  private curLine = 1;
  private lineOffset = 0; // offset of the first character of curLine
  private depth = 0; // bracket nesting; newlines inside brackets are not tokens
  private atLineStart = true;
  private lineHasTokens = false; // a token other than INDENT/OUTDENT was emitted on this logical line
  private dents = 0; // pending INDENT (>0) or OUTDENT (<0) tokens
  // Indentation stack: the columns of the enclosing blocks' first lines.
  private readonly indents: number[] = [0];

  constructor(
    src: string,
    readonly file: string,
  ) {
    this.src = src;
    this.n = src.length;
    // A byte-order mark is not part of the program; columns still count from the first real character.
    if (src.charCodeAt(0) === 0xfeff) {
      this.p = 1;
      this.lineOffset = 1;
    }
  }

  /** The current token's position as a fresh Position. */
  pos(): Position {
    return { file: this.file, line: this.line, col: this.col };
  }

  /** The current token's source text. */
  raw(): string {
    return this.src.slice(this.start, this.end);
  }

  error(message: string, line = this.line, col = this.col): never {
    throw new StarlarkSyntaxError(message, { file: this.file, line, col });
  }

  private errorAt(message: string, offset: number): never {
    // Only used for offsets on the current line.
    throw new StarlarkSyntaxError(message, { file: this.file, line: this.curLine, col: offset - this.lineOffset + 1 });
  }

  private mark(): void {
    this.start = this.p;
    this.line = this.curLine;
    this.col = this.p - this.lineOffset + 1;
  }

  private newline(at: number): void {
    this.curLine++;
    this.lineOffset = at + 1;
  }

  /** Advances to the next token and returns its kind. */
  next(): Token {
    const src = this.src;
    this.value = undefined;
    for (;;) {
      let c: number;
      let blank = false;
      if (this.atLineStart) {
        this.atLineStart = false;
        const lineStart = this.p;
        let firstTab = -1;
        for (;;) {
          c = this.p < this.n ? src.charCodeAt(this.p) : -1;
          if (c === TAB) {
            if (firstTab < 0) firstTab = this.p;
          } else if (c !== SPACE) {
            break;
          }
          this.p++;
        }
        if (c === HASH || c === LF || c === CR || c === -1) blank = true;
        if (!blank && this.depth === 0) {
          // The spec (and Bazel) allow only spaces in indentation; tabs elsewhere are white space.
          if (firstTab >= 0) {
            this.errorAt('Tab characters are not allowed for indentation. Use spaces instead.', firstTab);
          }
          this.indent(this.p - lineStart);
        }
      }

      if (this.dents !== 0) {
        this.mark();
        this.end = this.p;
        if (this.dents < 0) {
          this.dents++;
          return (this.tok = Token.OUTDENT);
        }
        this.dents--;
        return (this.tok = Token.INDENT);
      }

      // Skip white space within the line.
      c = this.p < this.n ? src.charCodeAt(this.p) : -1;
      while (c === SPACE || c === TAB) {
        c = ++this.p < this.n ? src.charCodeAt(this.p) : -1;
      }

      if (c === HASH) {
        while (c !== LF && c !== CR && c !== -1) {
          c = ++this.p < this.n ? src.charCodeAt(this.p) : -1;
        }
      }

      if (c === CR) {
        // CRLF is one line ending; a lone CR ends a line too.
        if (this.p + 1 < this.n && src.charCodeAt(this.p + 1) === LF) this.p++;
        c = LF;
      }
      if (c === LF) {
        this.atLineStart = true;
        if (this.depth > 0 || blank || !this.lineHasTokens) {
          this.newline(this.p);
          this.p++;
          continue;
        }
        this.mark();
        this.newline(this.p);
        this.p++;
        this.end = this.p;
        this.lineHasTokens = false;
        return (this.tok = Token.NEWLINE);
      }

      if (c === -1) {
        this.mark();
        this.end = this.p;
        if (this.depth === 0) {
          if (this.lineHasTokens) {
            // The last line has no newline: end it, as if it had.
            this.lineHasTokens = false;
            this.atLineStart = true;
            return (this.tok = Token.NEWLINE);
          }
          if (this.indents.length > 1) {
            this.dents = 1 - this.indents.length;
            this.indents.length = 1;
            continue;
          }
        }
        return (this.tok = Token.EOF);
      }

      if (c === BACKSLASH) {
        const next = this.p + 1 < this.n ? src.charCodeAt(this.p + 1) : -1;
        if (next === LF) {
          this.newline(this.p + 1);
          this.p += 2;
          continue;
        }
        if (next === CR) {
          const crlf = this.p + 2 < this.n && src.charCodeAt(this.p + 2) === LF;
          this.newline(crlf ? this.p + 2 : this.p + 1);
          this.p += crlf ? 3 : 2;
          continue;
        }
        this.mark();
        this.error('stray backslash in program');
      }

      this.mark();
      this.lineHasTokens = true;
      return (this.tok = this.scanToken(c));
    }
  }

  /** Compares a new line's indentation with the stack and queues INDENT/OUTDENT tokens. */
  private indent(col: number): void {
    const indents = this.indents;
    let top = indents.length - 1;
    if (col > indents[top]!) {
      this.dents++;
      indents.push(col);
    } else if (col < indents[top]!) {
      while (top > 0 && col < indents[top]!) {
        this.dents--;
        indents.pop();
        top--;
      }
      if (col !== indents[top]) {
        this.mark();
        this.error('unindent does not match any outer indentation level');
      }
    }
  }

  private scanToken(c: number): Token {
    const src = this.src;
    switch (c) {
      case COMMA:
        this.p++;
        this.end = this.p;
        return Token.COMMA;
      case DQUOTE:
      case SQUOTE:
        return this.scanString(false, false);
      case LPAREN:
      case LBRACK:
      case LBRACE:
        this.depth++;
        this.p++;
        this.end = this.p;
        return c === LPAREN ? Token.LPAREN : c === LBRACK ? Token.LBRACK : Token.LBRACE;
      case RPAREN:
      case RBRACK:
      case RBRACE:
        if (this.depth === 0) this.error(`unexpected '${String.fromCharCode(c)}'`);
        this.depth--;
        this.p++;
        this.end = this.p;
        return c === RPAREN ? Token.RPAREN : c === RBRACK ? Token.RBRACK : Token.RBRACE;
    }

    if ((c >= LOWER_A && c <= LOWER_Z) || (c >= UPPER_A && c <= UPPER_Z) || c === UNDERSCORE || c >= 128) {
      if (c === LOWER_R || c === LOWER_B) {
        // r"...", b"...", rb"...", br"..."
        const c1 = this.p + 1 < this.n ? src.charCodeAt(this.p + 1) : -1;
        if (c1 === DQUOTE || c1 === SQUOTE) {
          this.p++;
          return this.scanString(c === LOWER_R, c === LOWER_B);
        }
        if ((c1 === LOWER_R || c1 === LOWER_B) && c1 !== c) {
          const c2 = this.p + 2 < this.n ? src.charCodeAt(this.p + 2) : -1;
          if (c2 === DQUOTE || c2 === SQUOTE) {
            this.p += 2;
            return this.scanString(true, true);
          }
        }
      }
      return this.scanIdentifier(c);
    }

    if (isDigit(c)) return this.scanNumber(c);

    this.p++;
    const c1 = this.p < this.n ? src.charCodeAt(this.p) : -1;
    let tok: Token;
    switch (c) {
      case DOT:
        if (isDigit(c1)) {
          this.p--;
          return this.scanNumber(c);
        }
        tok = Token.DOT;
        break;
      case EQ:
        tok = c1 === EQ ? (this.p++, Token.EQL) : Token.EQ;
        break;
      case COLON:
        tok = Token.COLON;
        break;
      case SEMI:
        tok = Token.SEMI;
        break;
      case TILDE:
        tok = Token.TILDE;
        break;
      case PLUS:
        tok = c1 === EQ ? (this.p++, Token.PLUS_EQ) : Token.PLUS;
        break;
      case MINUS:
        tok = c1 === EQ ? (this.p++, Token.MINUS_EQ) : Token.MINUS;
        break;
      case PERCENT:
        tok = c1 === EQ ? (this.p++, Token.PERCENT_EQ) : Token.PERCENT;
        break;
      case AMP:
        tok = c1 === EQ ? (this.p++, Token.AMP_EQ) : Token.AMP;
        break;
      case PIPE:
        tok = c1 === EQ ? (this.p++, Token.PIPE_EQ) : Token.PIPE;
        break;
      case CARET:
        tok = c1 === EQ ? (this.p++, Token.CIRCUMFLEX_EQ) : Token.CIRCUMFLEX;
        break;
      case BANG:
        if (c1 !== EQ) this.error("invalid character: '!'");
        this.p++;
        tok = Token.NEQ;
        break;
      case STAR:
        tok = c1 === STAR ? (this.p++, Token.STARSTAR) : c1 === EQ ? (this.p++, Token.STAR_EQ) : Token.STAR;
        break;
      case SLASH:
        if (c1 === SLASH) {
          this.p++;
          tok = this.p < this.n && src.charCodeAt(this.p) === EQ ? (this.p++, Token.SLASHSLASH_EQ) : Token.SLASHSLASH;
        } else {
          tok = c1 === EQ ? (this.p++, Token.SLASH_EQ) : Token.SLASH;
        }
        break;
      case LT:
        if (c1 === LT) {
          this.p++;
          tok = this.p < this.n && src.charCodeAt(this.p) === EQ ? (this.p++, Token.LTLT_EQ) : Token.LTLT;
        } else {
          tok = c1 === EQ ? (this.p++, Token.LE) : Token.LT;
        }
        break;
      case GT:
        if (c1 === GT) {
          this.p++;
          tok = this.p < this.n && src.charCodeAt(this.p) === EQ ? (this.p++, Token.GTGT_EQ) : Token.GTGT;
        } else {
          tok = c1 === EQ ? (this.p++, Token.GE) : Token.GT;
        }
        break;
      default:
        this.error(`invalid character: ${describeChar(c)}`);
    }
    this.end = this.p;
    return tok;
  }

  private scanIdentifier(c: number): Token {
    const src = this.src;
    let p = this.p;
    if (c >= 128) {
      const cp = src.codePointAt(p)!;
      if (!UNICODE_LETTER.test(String.fromCodePoint(cp))) {
        this.error(`invalid character: ${describeChar(cp)}`);
      }
    }
    for (;;) {
      if (p >= this.n) break;
      c = src.charCodeAt(p);
      if ((c >= LOWER_A && c <= LOWER_Z) || (c >= UPPER_A && c <= UPPER_Z) || c === UNDERSCORE || isDigit(c)) {
        p++;
      } else if (c >= 128) {
        const cp = src.codePointAt(p)!;
        if (!UNICODE_LETTER.test(String.fromCodePoint(cp))) break;
        p += cp > 0xffff ? 2 : 1;
      } else {
        break;
      }
    }
    this.p = p;
    this.end = p;
    const name = src.slice(this.start, p);
    this.value = name;
    // Keywords are 2..8 lowercase letters.
    const len = p - this.start;
    if (len >= 2 && len <= 8) {
      const first = name.charCodeAt(0);
      if (first >= LOWER_A && first <= LOWER_Z) {
        const k = KEYWORD_TOKENS.get(name);
        if (k !== undefined) return k;
      }
    }
    return Token.IDENT;
  }

  private scanNumber(c: number): Token {
    const src = this.src;
    const start = this.p;
    let p = this.p;
    const at = (i: number): number => (i < this.n ? src.charCodeAt(i) : -1);
    let isFloat = false;

    if (c === ZERO) {
      const c1 = at(p + 1) | 0x20;
      let base = 0;
      if (c1 === 120)
        base = 16; // x
      else if (c1 === 111)
        base = 8; // o
      else if (c1 === LOWER_B) base = 2;
      if (base !== 0) {
        p += 2;
        const digitsStart = p;
        let v = 0;
        for (;;) {
          const d = hexValue(at(p));
          if (d < 0 || d >= base) break;
          v = v * base + d;
          p++;
        }
        if (p === digitsStart || isDigit(at(p))) {
          this.p = p;
          const kind = base === 16 ? 'hex' : base === 8 ? 'octal' : 'binary';
          this.error(`invalid ${kind} literal`);
        }
        this.p = p;
        this.end = p;
        this.value = v <= MAX_SAFE ? v : toIntValue(BigInt(src.slice(start, p)));
        return Token.INT;
      }
    }

    // Decimal digits, then an optional fraction and exponent.
    let v = 0;
    if (c !== DOT) {
      while (isDigit(at(p))) {
        v = v * 10 + (src.charCodeAt(p) - ZERO);
        p++;
      }
    }
    if (at(p) === DOT) {
      isFloat = true;
      p++;
      while (isDigit(at(p))) p++;
    }
    const e = at(p) | 0x20;
    if (e === 101) {
      // e or E
      isFloat = true;
      p++;
      const sign = at(p);
      if (sign === PLUS || sign === MINUS) p++;
      if (!isDigit(at(p))) {
        this.p = p;
        this.end = p;
        this.error('invalid float literal');
      }
      while (isDigit(at(p))) p++;
    }
    this.p = p;
    this.end = p;
    const text = src.slice(start, p);
    if (isFloat) {
      const f = Number(text);
      if (!Number.isFinite(f)) this.error('invalid float literal'); // too large: a static error, as the spec says
      this.value = f;
      return Token.FLOAT;
    }
    if (c === ZERO && p - start > 1) {
      // Python 2's 0755 octal form is not Starlark; 0 followed by zeros is just 0.
      let allZeros = true;
      let octal = true;
      for (let i = start; i < p; i++) {
        const d = src.charCodeAt(i);
        if (d !== ZERO) allZeros = false;
        if (d > SEVEN) octal = false;
      }
      if (!allZeros) {
        this.error(octal ? `obsolete form of octal literal; use 0o${text.slice(1)}` : 'invalid int literal');
      }
    }
    this.value = v <= MAX_SAFE ? v : toIntValue(BigInt(text));
    return Token.INT;
  }

  /**
   * Scans a string or bytes literal. `this.p` is at the opening quote; `this.start` at the prefix.
   * First finds the end (so an error can say "unexpected EOF in string"), then decodes.
   */
  private scanString(raw: boolean, bytes: boolean): Token {
    const src = this.src;
    const quote = src.charCodeAt(this.p);
    const triple = this.p + 2 < this.n && src.charCodeAt(this.p + 1) === quote && src.charCodeAt(this.p + 2) === quote;
    const openLen = triple ? 3 : 1;
    let p = this.p + openLen;
    const contentStart = p;
    let needsDecoding = false;
    let contentEnd: number;
    for (;;) {
      if (p >= this.n) this.error('unexpected EOF in string');
      const c = src.charCodeAt(p);
      if (c === quote) {
        if (!triple) {
          contentEnd = p;
          p++;
          break;
        }
        if (p + 2 < this.n && src.charCodeAt(p + 1) === quote && src.charCodeAt(p + 2) === quote) {
          contentEnd = p;
          p += 3;
          break;
        }
        p++;
      } else if (c === BACKSLASH) {
        needsDecoding = true;
        if (p + 1 >= this.n) this.error('unexpected EOF in string');
        const e = src.charCodeAt(p + 1);
        if (e === LF) {
          this.newline(p + 1);
        } else if (e === CR) {
          if (p + 2 < this.n && src.charCodeAt(p + 2) === LF) p++;
          this.newline(p + 1);
        }
        p += 2;
      } else if (c === LF) {
        if (!triple) this.error('unexpected newline in string');
        this.newline(p);
        p++;
      } else if (c === CR) {
        needsDecoding = true;
        if (p + 1 < this.n && src.charCodeAt(p + 1) === LF) {
          p++; // the LF is handled (and counted) next
        } else {
          if (!triple) this.error('unexpected newline in string');
          this.newline(p);
          p++;
        }
      } else {
        p++;
      }
    }
    this.p = p;
    this.end = p;
    if (!needsDecoding) {
      const text = src.slice(contentStart, contentEnd);
      if (bytes) {
        this.value = utf8.encode(text);
        return Token.BYTES;
      }
      this.value = text;
      return Token.STRING;
    }
    if (bytes) {
      this.value = this.decodeBytes(contentStart, contentEnd, raw);
      return Token.BYTES;
    }
    this.value = this.decodeString(contentStart, contentEnd, raw);
    return Token.STRING;
  }

  private decodeString(from: number, to: number, raw: boolean): string {
    const src = this.src;
    let out = '';
    let chunk = from;
    let p = from;
    while (p < to) {
      const c = src.charCodeAt(p);
      if (c === CR) {
        // An unescaped line ending is always a line feed.
        out += src.slice(chunk, p) + '\n';
        p += p + 1 < to && src.charCodeAt(p + 1) === LF ? 2 : 1;
        chunk = p;
      } else if (c === BACKSLASH && !raw) {
        out += src.slice(chunk, p);
        const e = this.decodeEscape(p, to, false);
        if (e.code >= 0) out += String.fromCodePoint(e.code);
        p = e.next;
        chunk = p;
      } else {
        // Raw literals keep backslashes as written.
        p++;
      }
    }
    return out + src.slice(chunk, to);
  }

  private decodeBytes(from: number, to: number, raw: boolean): Uint8Array {
    const src = this.src;
    const out: number[] = [];
    let chunk = from;
    let p = from;
    const flush = (end: number): void => {
      if (end > chunk) for (const b of utf8.encode(src.slice(chunk, end))) out.push(b);
    };
    while (p < to) {
      const c = src.charCodeAt(p);
      if (c === CR) {
        flush(p);
        out.push(LF);
        p += p + 1 < to && src.charCodeAt(p + 1) === LF ? 2 : 1;
        chunk = p;
      } else if (c === BACKSLASH && !raw) {
        flush(p);
        const e = this.decodeEscape(p, to, true);
        if (e.code >= 0) {
          if (e.isByte) out.push(e.code);
          else for (const b of utf8.encode(String.fromCodePoint(e.code))) out.push(b);
        }
        p = e.next;
        chunk = p;
      } else {
        p++;
      }
    }
    flush(to);
    return Uint8Array.from(out);
  }

  /**
   * Decodes the escape sequence at src[p] (a backslash) inside a literal ending at `to`.
   * Returns the code point or byte (-1 for an escaped newline) and the offset after the escape.
   */
  private decodeEscape(p: number, to: number, bytes: boolean): { code: number; isByte: boolean; next: number } {
    const src = this.src;
    if (p + 1 >= to) this.error('truncated escape sequence \\');
    const e = src.charCodeAt(p + 1);
    switch (e) {
      case LF:
        return { code: -1, isByte: false, next: p + 2 };
      case CR:
        return { code: -1, isByte: false, next: p + 2 < to && src.charCodeAt(p + 2) === LF ? p + 3 : p + 2 };
      case 97: // a
        return { code: 7, isByte: true, next: p + 2 };
      case LOWER_B:
        return { code: 8, isByte: true, next: p + 2 };
      case 102: // f
        return { code: 12, isByte: true, next: p + 2 };
      case 110: // n
        return { code: 10, isByte: true, next: p + 2 };
      case LOWER_R:
        return { code: 13, isByte: true, next: p + 2 };
      case 116: // t
        return { code: 9, isByte: true, next: p + 2 };
      case 118: // v
        return { code: 11, isByte: true, next: p + 2 };
      case BACKSLASH:
      case SQUOTE:
      case DQUOTE:
        return { code: e, isByte: true, next: p + 2 };
      case 120: {
        // x: exactly two hex digits
        if (p + 4 > to) this.error(`truncated escape sequence ${visible(src.slice(p, to))}`);
        const hi = hexValue(src.charCodeAt(p + 2));
        const lo = hexValue(src.charCodeAt(p + 3));
        const text = visible(src.slice(p, p + 4));
        if (hi < 0 || lo < 0) this.error(`invalid escape sequence ${text}`);
        const n = hi * 16 + lo;
        if (!bytes && n > 127) {
          this.error(`non-ASCII hex escape ${text} (use \\u${hex4(n)} for the UTF-8 encoding of U+${hex4(n)})`);
        }
        return { code: n, isByte: true, next: p + 4 };
      }
      case 117: // u
      case 85: {
        // U
        const size = e === 117 ? 6 : 10;
        if (p + size > to) this.error(`truncated escape sequence ${visible(src.slice(p, to))}`);
        const text = visible(src.slice(p, p + size));
        let n = 0;
        for (let i = p + 2; i < p + size; i++) {
          const d = hexValue(src.charCodeAt(i));
          if (d < 0) this.error(`invalid escape sequence ${text}`);
          n = n * 16 + d;
        }
        if (n > 0x10ffff) this.error(`code point out of range: ${text} (max \\U0010ffff)`);
        if (n >= 0xd800 && n < 0xe000) this.error(`invalid Unicode code point U+${hex4(n)}`);
        return { code: n, isByte: false, next: p + size };
      }
    }
    if (e >= ZERO && e <= SEVEN) {
      let n = e - ZERO;
      let q = p + 2;
      for (let i = 1; i < 3 && q < to; i++) {
        const d = src.charCodeAt(q);
        if (d < ZERO || d > SEVEN) break;
        n = n * 8 + (d - ZERO);
        q++;
      }
      if (!bytes && n > 127) {
        this.error(`non-ASCII octal escape \\${n.toString(8)} (use \\u${hex4(n)} for the UTF-8 encoding of U+${hex4(n)})`);
      }
      if (n >= 256) this.error(`invalid escape sequence \\${n.toString(8).padStart(3, '0')}`);
      return { code: n, isByte: true, next: q };
    }
    const cp = src.codePointAt(p + 1)!;
    this.error(`invalid escape sequence \\${visible(String.fromCodePoint(cp))}`);
  }
}

function hex4(n: number): string {
  return n.toString(16).toUpperCase().padStart(4, '0');
}

/** An int literal's value: a number when it is a safe integer, else the bigint. */
function toIntValue(b: bigint): number | bigint {
  return b <= BigInt(MAX_SAFE) ? Number(b) : b;
}

/** A character as error messages quote it: 'x', or an escape for controls and odd characters. */
function describeChar(cp: number): string {
  if (cp >= 0x20 && cp < 0x7f) return `'${String.fromCharCode(cp)}'`;
  if (cp < 0x20 || cp === 0x7f) return `'\\x${cp.toString(16).padStart(2, '0')}'`;
  const ch = String.fromCodePoint(cp);
  // Invisible or unassigned characters (spaces, controls, lone surrogates) are shown as escapes.
  if (VISIBLE.test(ch)) return `'${ch}'`;
  return cp > 0xffff ? `'\\U${cp.toString(16).padStart(8, '0')}'` : `'\\u${cp.toString(16).padStart(4, '0')}'`;
}

const VISIBLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

/**
 * Source text quoted in an error message, with control characters (a newline inside a string literal,
 * say) written as escapes: a diagnostic is always one line.
 */
function visible(text: string): string {
  return text.replace(/[\x00-\x1f\x7f]/g, (c) => {
    const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
    return named[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
  });
}
