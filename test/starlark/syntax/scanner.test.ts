import { describe, expect, test } from 'vitest';
import { scanToString } from './scan-tokens.js';

// Each row: source, expected tokens (or `file:line:col: message`).
const TOKENS: [string, string][] = [
  ['', 'EOF'],
  ['123', '123 newline EOF'],
  ['x.y', 'x . y newline EOF'],
  ['chocolate.éclair', 'chocolate . éclair newline EOF'],
  ['print(x); print(y)', 'print ( x ) ; print ( y ) newline EOF'],
  ['\nprint(\n1\n)\n', 'print ( 1 ) newline EOF'],
  ['/ // /= //= ///=', '/ // /= //= // /= newline EOF'],
  [
    '+ - * ** % & | ^ ~ << >> < > <= >= == != = += -= *= %= &= |= ^= <<= >>= . , ; :',
    '+ - * ** % & | ^ ~ << >> < > <= >= == != = += -= *= %= &= |= ^= <<= >>= . , ; : newline EOF',
  ],
  ['([{<>}])', '( [ { < > } ] ) newline EOF'],
  ['\ufeffx = 1', 'x = 1 newline EOF'],
  ['1.7976931348623157e308', 'float(1.7976931348623157e+308) newline EOF'],
  ['# hello\nx # world\n', 'x newline EOF'],
  [
    'and break continue def elif else for if in lambda load not or pass return while',
    'and break continue def elif else for if in lambda load not or pass return while newline EOF',
  ],
  ['class import assert', 'class import assert newline EOF'],
  ['def f(): pass', 'def f ( ) : pass newline EOF'],
  ['def f():\n  pass\n', 'def f ( ) : newline indent pass newline outdent EOF'],
  ['def f():\n  pass', 'def f ( ) : newline indent pass newline outdent EOF'],
  ['def f():\n  if x:\n    pass\n  y\nz', 'def f ( ) : newline indent if x : newline indent pass newline outdent y newline outdent z newline EOF'],
  ['def f():\n  if x:\n    pass\n', 'def f ( ) : newline indent if x : newline indent pass newline outdent outdent EOF'],
  ['def f():\n  pass\t# tabs after indentation are white space\n', 'def f ( ) : newline indent pass newline outdent EOF'],
  ['x = [\n\t1,\n\t\t2]\n', 'x = [ 1 , 2 ] newline EOF'],
  ['def f():\n  x\n\t# a comment line may start with a tab\n  y\n', 'def f ( ) : newline indent x newline y newline outdent EOF'],
  ['def f():\n  x\n\n  # c\n      # d\n  y\n', 'def f ( ) : newline indent x newline y newline outdent EOF'],
  ['pass\n \n', 'pass newline EOF'],
  ['if x:\n  pass\n ', 'if x : newline indent pass newline outdent EOF'],
  ['x = [\n  1,\n    2,\n]\n', 'x = [ 1 , 2 , ] newline EOF'],
  ['x = 1 + \\\n  2', 'x = 1 + 2 newline EOF'],
  ['x = 1 + \\\r\n  2', 'x = 1 + 2 newline EOF'],
  ['a\rb', 'a newline b newline EOF'],
  ['a\r\nb', 'a newline b newline EOF'],
  ['a\n\nb', 'a newline b newline EOF'],
  // numbers
  ['0', '0 newline EOF'],
  ['00', '0 newline EOF'],
  ['0.', 'float(0) newline EOF'],
  ['0.e1', 'float(0) newline EOF'],
  ['.0', 'float(0) newline EOF'],
  ['.e1', '. e1 newline EOF'],
  ['1.', 'float(1) newline EOF'],
  ['.1', 'float(0.1) newline EOF'],
  ['.1e+1', 'float(1) newline EOF'],
  ['.1e-1', 'float(0.01) newline EOF'],
  ['1e1', 'float(10) newline EOF'],
  ['1E-1', 'float(0.1) newline EOF'],
  ['123e45', 'float(1.23e+47) newline EOF'],
  ['9007199254740991', '9007199254740991 newline EOF'],
  ['9007199254740992', '9007199254740992 newline EOF'],
  ['999999999999999999999999999999999999999999999999999', '999999999999999999999999999999999999999999999999999 newline EOF'],
  ['0xA 0XA 0xff', '10 10 255 newline EOF'],
  ['0xAAG', '170 G newline EOF'],
  ['0xA.e1', '10 . e1 newline EOF'],
  ['0x12345678deadbeef12345678', '5634002672576678570168178296 newline EOF'],
  ['0b1010 0B111101 0b0000', '10 61 0 newline EOF'],
  ['0o123 0O17', '83 15 newline EOF'],
  ['0o123.', '83 . newline EOF'],
  ['012934.', 'float(12934) newline EOF'],
  ['0123.1', 'float(123.1) newline EOF'],
  ['012934e1', 'float(129340) newline EOF'],
  // strings
  [`x = 'a\\nb'`, 'x = "a\\nb" newline EOF'],
  [`x = r'a\\nb'`, 'x = "a\\\\nb" newline EOF'],
  ["x = 'a\\\nb'", 'x = "ab" newline EOF'],
  [`x = '\\''`, `x = "'" newline EOF`],
  [`x = "\\""`, 'x = "\\"" newline EOF'],
  [`x = r'\\''`, `x = "\\\\'" newline EOF`],
  [`x = '''\\''''`, `x = "'" newline EOF`],
  [`x = ''''a'b'c'''`, `x = "'a'b'c" newline EOF`],
  ["x = '''a\nb'''", 'x = "a\\nb" newline EOF'],
  ["x = '''a\rb'''", 'x = "a\\nb" newline EOF'],
  ["x = '''a\r\nb'''", 'x = "a\\nb" newline EOF'],
  ["x = r'a\\\nb'", 'x = "a\\\\\\nb" newline EOF'],
  ["x = r'a\\\r\nb'", 'x = "a\\\\\\nb" newline EOF'],
  [`"\\a\\b\\f\\n\\r\\t\\v\\\\"`, '"\\u0007\\b\\f\\n\\r\\t\\u000b\\\\" newline EOF'],
  [`"\\037" "\\378" "\\0" "\\101-\\132" "\\119"`, '"\\u001f" "\\u001f8" "\\u0000" "A-Z" "\\t9" newline EOF'],
  [`"\\x00\\x41\\x7e\\x7f"`, '"\\u0000A~\u007f" newline EOF'],
  [`"\\u0400" "\\u04000" "\\u4E16" "\\U00000400" "\\U0001F63F" "\\U0010FFFF"`, '"Ѐ" "Ѐ0" "世" "Ѐ" "😿" "\udbff\udfff" newline EOF'],
  [`r"\\w" r"\\"" r'\\'' r'\\"'`, `"\\\\w" "\\\\\\"" "\\\\'" "\\\\\\"" newline EOF`],
  // bytes
  [`b"abc" b'' B`, 'b[97,98,99] b[] B newline EOF'],
  [`b"AЀ"`, 'b[65,208,128] newline EOF'],
  [`b"\\x41\\u0400"`, 'b[65,208,128] newline EOF'],
  [`b"\\377\\378\\x80\\xff\\xFf"`, 'b[255,31,56,128,255,255] newline EOF'],
  [`rb"\\x41" br'\\n'`, 'b[92,120,52,49] b[92,110] newline EOF'],
  [`b"""a\nb"""`, 'b[97,10,98] newline EOF'],
];

const ERRORS: [string, string][] = [
  ['0xG', 'foo.star:1:1: invalid hex literal'],
  ['0b3', 'foo.star:1:1: invalid binary literal'],
  ['0b102', 'foo.star:1:1: invalid binary literal'],
  ['0o', 'foo.star:1:1: invalid octal literal'],
  ['0123', 'foo.star:1:1: obsolete form of octal literal; use 0o123'],
  ['012934', 'foo.star:1:1: invalid int literal'],
  ['i = 012934', 'foo.star:1:5: invalid int literal'],
  ['1e', 'foo.star:1:1: invalid float literal'],
  ['1e+', 'foo.star:1:1: invalid float literal'],
  ['1e400', 'foo.star:1:1: invalid float literal'],
  ['x = 1.8e308', 'foo.star:1:5: invalid float literal'],
  [`"\\377"`, 'foo.star:1:1: non-ASCII octal escape \\377 (use \\u00FF for the UTF-8 encoding of U+00FF)'],
  [`"\\400"`, 'foo.star:1:1: non-ASCII octal escape \\400 (use \\u0100 for the UTF-8 encoding of U+0100)'],
  [`b"\\400"`, 'foo.star:1:1: invalid escape sequence \\400'],
  [`"\\x80"`, 'foo.star:1:1: non-ASCII hex escape \\x80 (use \\u0080 for the UTF-8 encoding of U+0080)'],
  [`"\\xF"`, 'foo.star:1:1: truncated escape sequence \\xF'],
  [`"\\x"`, 'foo.star:1:1: truncated escape sequence \\x'],
  [`"\\xfg"`, 'foo.star:1:1: invalid escape sequence \\xfg'],
  [`"\\u100"`, 'foo.star:1:1: truncated escape sequence \\u100'],
  [`"\\u100g"`, 'foo.star:1:1: invalid escape sequence \\u100g'],
  // Found by the fuzz test: a newline inside the quoted escape is shown escaped, so the message stays one line.
  ["'''\\ulti\npass'''", 'foo.star:1:1: invalid escape sequence \\ulti\\n'],
  [`"\\udc00"`, 'foo.star:1:1: invalid Unicode code point U+DC00'],
  [`b"\\udc00"`, 'foo.star:1:1: invalid Unicode code point U+DC00'],
  [`"\\U0000400"`, 'foo.star:1:1: truncated escape sequence \\U0000400'],
  [`"\\U00110000"`, 'foo.star:1:1: code point out of range: \\U00110000 (max \\U0010ffff)'],
  [`"foo\\(bar"`, 'foo.star:1:1: invalid escape sequence \\('],
  [`'a\\zb'`, 'foo.star:1:1: invalid escape sequence \\z'],
  [`"""\\w"""`, 'foo.star:1:1: invalid escape sequence \\w'],
  [`"\\o123"`, 'foo.star:1:1: invalid escape sequence \\o'],
  ['x = "abc', 'foo.star:1:5: unexpected EOF in string'],
  ['x = "abc\ny"', 'foo.star:1:5: unexpected newline in string'],
  ['x = """abc\n\n', 'foo.star:1:5: unexpected EOF in string'],
  ['x = "abc\\', 'foo.star:1:5: unexpected EOF in string'],
  ['x ! 0', "foo.star:1:3: invalid character: '!'"],
  ['x = $', "foo.star:1:5: invalid character: '$'"],
  ['x = ?', "foo.star:1:5: invalid character: '?'"],
  ['x = `', "foo.star:1:5: invalid character: '`'"],
  ['x = \u0000', "foo.star:1:5: invalid character: '\\x00'"],
  ['x = \u00a0', "foo.star:1:5: invalid character: '\\u00a0'"],
  ['x = \u200b', "foo.star:1:5: invalid character: '\\u200b'"],
  ['x = \ud800', "foo.star:1:5: invalid character: '\\ud800'"],
  ['x = €', "foo.star:1:5: invalid character: '€'"],
  ['x = 😀', "foo.star:1:5: invalid character: '😀'"],
  ['x = \u{e0001}', "foo.star:1:5: invalid character: '\\U000e0001'"],
  ['x = 1 \\ 2', 'foo.star:1:7: stray backslash in program'],
  ['x = )', "foo.star:1:5: unexpected ')'"],
  ['}', "foo.star:1:1: unexpected '}'"],
  ['def f():\n  pass\n pass', 'foo.star:3:2: unindent does not match any outer indentation level'],
  ['def f():\n\tpass\n', 'foo.star:2:1: Tab characters are not allowed for indentation. Use spaces instead.'],
  ['def f():\n  x\n  \ty\n', 'foo.star:3:3: Tab characters are not allowed for indentation. Use spaces instead.'],
  ['x = "a"\ny = "b\n', 'foo.star:2:5: unexpected newline in string'],
  ['s = """\n\n"""; t = "\n', 'foo.star:3:10: unexpected newline in string'],
];

describe('scanner tokens', () => {
  test.each(TOKENS)('%j', (src, want) => {
    expect(scanToString(src)).toBe(want);
  });
});

describe('scanner errors', () => {
  test.each(ERRORS)('%j', (src, want) => {
    expect(scanToString(src)).toBe(want);
  });
});

describe('scanner positions', () => {
  test('tokens after multi-line strings and continuations have exact line:col', async () => {
    const { Scanner } = await import('../../../src/starlark/syntax/index.js');
    const sc = new Scanner('a = """x\ny"""  +\\\n  b\n  c = [\n 1]', 'p.star');
    const seen: string[] = [];
    for (let t = sc.next(); t !== 0; t = sc.next()) seen.push(`${sc.raw() || '·'}@${sc.line}:${sc.col}`);
    expect(seen).toEqual([
      'a@1:1',
      '=@1:3',
      '"""x\ny"""@1:5',
      '+@2:7',
      'b@3:3',
      '\n@3:4',
      '·@4:3',
      'c@4:3',
      '=@4:5',
      '[@4:7',
      '1@5:2',
      ']@5:3',
      '·@5:4',
      '·@5:4',
    ]);
  });
});

describe('scanner: byte-order mark', () => {
  test('is skipped and does not shift columns', async () => {
    const { Scanner } = await import('../../../src/starlark/syntax/index.js');
    const sc = new Scanner('\ufeffab = 1', 'bom.star');
    sc.next();
    expect([sc.raw(), sc.line, sc.col]).toEqual(['ab', 1, 1]);
  });
});
