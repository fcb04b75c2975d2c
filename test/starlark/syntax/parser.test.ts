import { describe, expect, test } from 'vitest';
import {
  StarlarkSyntaxError,
  parseExpression,
  parseFile,
  printExpr,
  printFile,
  type CallExpr,
  type DefStmt,
  type ExprStmt,
  type IntLiteral,
} from '../../../src/starlark/syntax/index.js';

function parseExprToString(src: string): string {
  try {
    return printExpr(parseExpression(src, 'foo.star'));
  } catch (e) {
    if (e instanceof StarlarkSyntaxError) return e.format();
    throw e;
  }
}

function parseToString(src: string): string {
  try {
    return printFile(parseFile(src, 'foo.star'));
  } catch (e) {
    if (e instanceof StarlarkSyntaxError) return e.format();
    throw e;
  }
}

// Expressions: source, canonical fully-parenthesized form.
const EXPRS: [string, string][] = [
  ['print(1)', 'print(1)'],
  ['x + 1', '(x + 1)'],
  ['[x for x in y]', '[x for x in y]'],
  ['[x for x in (a if b else c)]', '[x for x in ((a if b else c))]'],
  ['x[i].f(42)', 'x[i].f(42)'],
  ['x+y*z', '(x + (y * z))'],
  ['x%y-z', '((x % y) - z)'],
  ['a - b - c', '((a - b) - c)'],
  ['a // b / c * d % e', '((((a // b) / c) * d) % e)'],
  ['a + b not in c', '((a + b) not in c)'],
  ['a not in b', '(a not in b)'],
  ['not a in b', '(not (a in b))'],
  ['not not a', '(not (not a))'],
  ['a and not b', '(a and (not b))'],
  ['not a and b', '((not a) and b)'],
  ['not a == b', '(not (a == b))'],
  ['a or b and c or d', '((a or (b and c)) or d)'],
  ['a and b or c and d', '((a and b) or (c and d))'],
  ['a | b & c | d', '((a | (b & c)) | d)'],
  ['a | b ^ c & d', '(a | (b ^ (c & d)))'],
  ['a & b << c + d', '(a & (b << (c + d)))'],
  ['a << b >> c', '((a << b) >> c)'],
  ['a == b | c', '(a == (b | c))'],
  ['a < b and b < c', '((a < b) and (b < c))'],
  ['a in b == c in d', 'foo.star:1:8: in does not associate with == (use parens)'],
  ['-1 + +2', '((-1) + (+2))'],
  ['-1 * 2', '((-1) * 2)'],
  ['-x[i]', '(-x[i])'],
  ['-x.y(1)', '(-x.y(1))'],
  ['~x ** 2', "foo.star:1:4: got '**' after expression, want EOF"],
  ['- - ~x', '(-(-(~x)))'],
  ['lambda x, *args, **kwargs: None', '(lambda x, *args, **kwargs: None)'],
  ['lambda: 0', '(lambda: 0)'],
  ['lambda *args, *, x=1, **kwargs: 0', '(lambda *args, *, x=1, **kwargs: 0)'],
  ['lambda *, a, *b: 0', '(lambda *, a, *b: 0)'],
  ['lambda x: lambda y: x + y', '(lambda x: (lambda y: (x + y)))'],
  ['lambda x: a if x else b', '(lambda x: (a if x else b))'],
  ['a if b else c', '(a if b else c)'],
  ['a if b else c if d else e', '(a if b else (c if d else e))'],
  ['a or b if c or d else e and f', '((a or b) if (c or d) else (e and f))'],
  ['{"one": 1}', '{"one": 1}'],
  ['a[i]', 'a[i]'],
  ['a[i:]', 'a[i::]'],
  ['a[:j]', 'a[:j:]'],
  ['a[::]', 'a[::]'],
  ['a[::k]', 'a[::k]'],
  ['a[1:2:3]', 'a[1:2:3]'],
  ['a[-1:-2:-1]', 'a[(-1):(-2):(-1)]'],
  ['a[1, 2]', 'a[(1, 2)]'],
  ['[]', '[]'],
  ['[1]', '[1]'],
  ['[1,]', '[1]'],
  ['[1, 2]', '[1, 2]'],
  ['()', '()'],
  ['(4,)', '(4,)'],
  ['(4)', '(4)'],
  ['((4))', '((4))'],
  ['(4, 5)', '(4, 5)'],
  ['1, 2, 3', '(1, 2, 3)'],
  ['1, 2,', 'foo.star:1:5: unparenthesized tuple with trailing comma'],
  ['{}', '{}'],
  ['{"a": 1,}', '{"a": 1}'],
  ['{"a": 1, "b": 2}', '{"a": 1, "b": 2}'],
  ['{x: y for (x, y) in z}', '{x: y for (x, y) in z}'],
  ['{x: y for a in b if c}', '{x: y for a in b if c}'],
  ['[e for x in y if c1 if c2 for z in x if z]', '[e for x in y if c1 if c2 for z in x if z]'],
  ['[x for x, in y]', 'foo.star:1:11: got in, want primary expression'],
  ['[x for x, y in z]', '[x for (x, y) in z]'],
  ['[a for a.b in c]', '[a for a.b in c]'],
  ['f(1, x=y)', 'f(1, x=y)'],
  ['f(*args, **kwargs)', 'f(*args, **kwargs)'],
  ['f(a, *b, c=1, **d,)', 'f(a, *b, c=1, **d)'],
  ['f()()', 'f()()'],
  ['"foo" + "bar"', '("foo" + "bar")'],
  ['"a" "b"', 'foo.star:1:5: got string literal after expression, want EOF'],
  ['1.5 + 2e3 + 0x10 + 0o17 + 0b11', '((((1.5 + 2000.0) + 16) + 15) + 3)'],
  ['b"\\x00ab"', 'b"\\x00ab"'],
  ['x.y.z', 'x.y.z'],
  ['x.1', 'foo.star:1:2: got float literal after expression, want EOF'],
  ['0x7.f', '(7).f'],
  ['1 .real', '(1).real'],
  ['x. y', 'x.y'],
  ['f(\n  1,\n  2,\n)', 'f(1, 2)'],
];

const FILES: [string, string][] = [
  ['print(1)', 'print(1)'],
  ['return 1, 2', 'return (1, 2)'],
  ['return', 'return'],
  ['for i in "abc": break', 'for i in "abc":\n  break'],
  ['for x, y in z: pass', 'for (x, y) in z:\n  pass'],
  ['for x in 1, 2, 3: pass', 'for x in (1, 2, 3):\n  pass'],
  ['for x[0].y in z: pass', 'for x[0].y in z:\n  pass'],
  ['if True: pass\nelse: pass', 'if True:\n  pass\nelse:\n  pass'],
  ['if a:\n  pass\nelif b:\n  pass\nelif c: x\nelse:\n  y\n  z', 'if a:\n  pass\nelif b:\n  pass\nelif c:\n  x\nelse:\n  y\n  z'],
  ['x, y = 1, 2', '(x, y) = (1, 2)'],
  ['[x, (y, z)] = 1, (2, 3)', '[x, (y, z)] = (1, (2, 3))'],
  ['x[i] = 1', 'x[i] = 1'],
  ['x.f = 1', 'x.f = 1'],
  ['x += 1; y -= 2; z *= 3; a /= 4; b //= 5; c %= 6', 'x += 1\ny -= 2\nz *= 3\na /= 4\nb //= 5\nc %= 6'],
  ['a &= 1; b |= 2; c ^= 3; d <<= 4; e >>= 5;', 'a &= 1\nb |= 2\nc ^= 3\nd <<= 4\ne >>= 5'],
  ['def f(): pass', 'def f():\n  pass'],
  ['def f(a, b=1, *args, c, d=2, **kwargs):\n  """doc"""\n  return a', 'def f(a, b=1, *args, c, d=2, **kwargs):\n  "doc"\n  return a'],
  ['def f(a, *, b,): pass', 'def f(a, *, b):\n  pass'],
  ['def f():\n  def g():\n    return 1\n  return g', 'def f():\n  def g():\n    return 1\n  return g'],
  ['while x:\n  x -= 1\n  continue', 'while x:\n  x -= 1\n  continue'],
  ['load("a.star", "x", y = "z", "w",)', 'load("a.star", "x", y="z", "w")'],
  ['\n\n# comment\n\nx = 1\n\n\n', 'x = 1'],
  ['x = 1;', 'x = 1'],
  ['x = (\n  1 +\n  2\n)', 'x = ((1 + 2))'],
  ['x = [\n  1, # one\n  2, # two\n]', 'x = [1, 2]'],
];

// Errors: messages as starlark-go words them, at the offending token.
const ERRORS: [string, string][] = [
  ['x = 1 +', 'foo.star:1:8: got newline, want primary expression'],
  ['_ = *x', "foo.star:1:5: got '*', want primary expression"],
  ['def f(a, *-b, c): pass', "foo.star:1:11: got '-', want ','"],
  ['def pass(): pass', 'foo.star:1:5: not an identifier'],
  ['def f : pass', "foo.star:1:7: got ':', want '('"],
  ['f(a=1, *, b=2)', "foo.star:1:9: got ',', want primary expression"],
  ['_ = {x for y in z}', "foo.star:1:8: got for, want ':'"],
  ['_ = [x for x in lambda: True, lambda: False if x()]', 'foo.star:1:17: got lambda, want primary expression'],
  ['_ = [x for x in 1, 2, 3]', "foo.star:1:18: got ',', want ']', for, or if"],
  ['_ = [a for b in c if 1, 2]', "foo.star:1:23: got ',', want ']', for, or if"],
  ['_ = [a for b in c if lambda: d if e else f]', "foo.star:1:37: got else, want ']', for, or if"],
  ['_ = 0 == 1 == 2', 'foo.star:1:12: == does not associate with == (use parens)'],
  ['_ = 0 <= i < n', 'foo.star:1:12: <= does not associate with < (use parens)'],
  ['_ = a in b not in c', 'foo.star:1:12: in does not associate with not in (use parens)'],
  ['_ = a < b | c < d', 'foo.star:1:15: < does not associate with < (use parens)'],
  ['_ = [x for x in a if b else c]', "foo.star:1:24: got else, want ']', for, or if"],
  ['_ = a + b not c', 'foo.star:1:15: got identifier, want in'],
  ['f(1+2 = 3)', 'foo.star:1:7: keyword argument must have form name=expr'],
  ['print(1, 2, 3', "foo.star:1:14: got end of file, want ')'"],
  ['_ = a if b', 'foo.star:1:7: conditional expression without else clause'],
  ['load("")', 'foo.star:1:5: load statement must import at least 1 symbol'],
  ['load("", 1)', 'foo.star:1:10: load operand must be "name" or localname="name" (got int literal)'],
  ['load(1, 2)', 'foo.star:1:6: first operand of load statement must be a string literal'],
  ['load("a", x)', 'foo.star:1:12: load operand must be "x" or x="originalname" (want \'=\' after x)'],
  ['load("a", x2=x)', 'foo.star:1:14: original name of loaded symbol must be quoted: x2="originalname"'],
  ['load = 1', "foo.star:1:6: got '=', want '('"],
  ['f(load())', 'foo.star:1:3: got load, want primary expression'],
  ['def load(): pass', 'foo.star:1:5: not an identifier'],
  ['def f(load): pass', 'foo.star:1:7: not an identifier'],
  ['print 1 2', 'foo.star:1:7: got int literal, want newline'],
  ['x[1, 2,:]', "foo.star:1:8: got ':', want primary expression"],
  ['a, b, = 1, 2', 'foo.star:1:5: unparenthesized tuple with trailing comma'],
  ['a, b = 1, 2,', 'foo.star:1:12: unparenthesized tuple with trailing comma'],
  ['a = max(range(10)))', "foo.star:1:19: unexpected ')'"],
  ['class = 1', 'foo.star:1:1: got class, want primary expression'],
  ['x = a.class', 'foo.star:1:7: not an identifier'],
  ['if x:\npass', 'foo.star:2:1: got pass, want indent'],
  ['x = 1\n  y = 2', 'foo.star:2:3: got indent, want primary expression'],
  ['def f():\n  x\n y', 'foo.star:3:2: unindent does not match any outer indentation level'],
  ['if x: pass\nelse pass', "foo.star:2:6: got pass, want ':'"],
  ['for x in y', "foo.star:1:11: got newline, want ':'"],
  ['for 1 in y: pass', 'for 1 in y:\n  pass'], // the resolver rejects the target
  ['f(x for x in y)', "foo.star:1:5: got for, want ','"],
  ['x = ', 'foo.star:1:5: got newline, want primary expression'],
  ['x = 1 = 2', "foo.star:1:7: got '=', want newline"],
  ['[1, 2', "foo.star:1:6: got end of file, want ']'"],
  ['x = (1 if 2)', 'foo.star:1:8: conditional expression without else clause'],
  ['def f(*): pass', 'def f(*):\n  pass'], // the parser accepts; the resolver rejects
  ['lambda x, : x', 'foo.star:1:11: not an identifier'],
  ['x = 1 if 2 else', 'foo.star:1:16: got newline, want primary expression'],
];

describe('parser: expressions', () => {
  test.each(EXPRS)('%j', (src, want) => {
    expect(parseExprToString(src)).toBe(want);
  });
});

describe('parser: files', () => {
  test.each(FILES)('%j', (src, want) => {
    expect(parseToString(src)).toBe(want);
  });
});

describe('parser: errors', () => {
  test.each(ERRORS)('%j', (src, want) => {
    expect(parseToString(src)).toBe(want);
  });
});

describe('parser: tree details', () => {
  test('positions point at the tokens the evaluator reports errors at', () => {
    const file = parseFile('x = 1\ny = f(a,\n      b)[2].z + 3\n', 'p.star');
    const assign = file.stmts[1]!;
    expect(assign.kind).toBe('AssignStmt');
    if (assign.kind !== 'AssignStmt') return;
    expect(assign.opPos).toEqual({ file: 'p.star', line: 2, col: 3 });
    const sum = assign.rhs;
    if (sum.kind !== 'BinaryExpr') throw new Error(sum.kind);
    expect(sum.pos).toMatchObject({ line: 2, col: 5 });
    expect(sum.opPos).toMatchObject({ line: 3, col: 15 });
    const dot = sum.x;
    if (dot.kind !== 'DotExpr') throw new Error(dot.kind);
    expect(dot.dot).toMatchObject({ line: 3, col: 12 });
    expect(dot.name.pos).toMatchObject({ line: 3, col: 13 });
    const index = dot.x;
    if (index.kind !== 'IndexExpr') throw new Error(index.kind);
    expect(index.lbrack).toMatchObject({ line: 3, col: 9 });
    const call = index.x as CallExpr;
    expect(call.lparen).toMatchObject({ line: 2, col: 6 });
    expect(call.rparen).toMatchObject({ line: 3, col: 8 });
    expect(call.args.map((a) => a.pos.line)).toEqual([2, 3]);
  });

  test('int literals keep exact values: numbers when safe, else bigints', () => {
    const value = (src: string) => (parseExpression(src, 'f') as IntLiteral).value;
    expect(value('9007199254740991')).toBe(9007199254740991);
    expect(value('9007199254740992')).toBe(9007199254740992n);
    expect(value('0x1fffffffffffff')).toBe(9007199254740991);
    expect(value('0x20000000000000')).toBe(2n ** 53n);
    expect(value('0b' + '1'.repeat(70))).toBe(2n ** 70n - 1n);
    expect(value('0o777777777777777777777')).toBe(0o777777777777777777777n);
  });

  test('def records parameters in order with their modes', () => {
    const def = parseFile('def f(a, b=1, *c, d, **e): pass', 'f').stmts[0] as DefStmt;
    expect(def.params.map((p) => `${p.mode}:${p.name?.name ?? ''}`)).toEqual(['plain:a', 'default:b', 'star:c', 'plain:d', 'starstar:e']);
    expect(def.fn).toBeNull();
  });

  test('load keeps separate local and original names', () => {
    const load = parseFile('load("m", "a", b = "c")', 'f').stmts[0]!;
    if (load.kind !== 'LoadStmt') throw new Error(load.kind);
    expect(load.module.value).toBe('m');
    expect(load.to.map((i) => i.name)).toEqual(['a', 'b']);
    expect(load.from.map((i) => i.name)).toEqual(['a', 'c']);
    expect(load.from[0]!.pos).toMatchObject({ line: 1, col: 12 });
    expect(load.to[0]).not.toBe(load.from[0]);
  });

  test('deep nesting is a syntax error, not a stack overflow', () => {
    const deep = '('.repeat(5000) + '1' + ')'.repeat(5000);
    expect(() => parseFile(`x = ${deep}`, 'f')).toThrow(StarlarkSyntaxError);
    const unary = '-'.repeat(5000) + '1';
    expect(() => parseFile(`x = ${unary}`, 'f')).toThrow(StarlarkSyntaxError);
    const chain = Array.from({ length: 5000 }, () => 'a').join(' + ');
    expect(() => parseFile(`x = ${chain}`, 'f')).toThrow(/nested too deeply/);
    const blocks = Array.from({ length: 300 }, (_, i) => ' '.repeat(i) + 'if x:').join('\n') + '\n' + ' '.repeat(300) + 'pass';
    expect(() => parseFile(blocks, 'f')).toThrow(/nested too deeply/);
  });

  test('moderately long operator chains, as in generated BUILD files, parse', () => {
    const chain = Array.from({ length: 500 }, (_, i) => `[${i}]`).join(' + ');
    const stmt = parseFile(`srcs = ${chain}`, 'f').stmts[0] as ExprStmt | { kind: string };
    expect(stmt.kind).toBe('AssignStmt');
  });
});

describe('parser: statement positions', () => {
  test('each statement starts at its keyword or first token', () => {
    const src = [
      'load("m", "a")', // 1
      'def f(x):', // 2
      '  if x:', // 3
      '    pass', // 4
      '  elif x:', // 5
      '    return', // 6
      '  for i in x:', // 7
      '    break', // 8
      '  while x:', // 9
      '    continue', // 10
      '  x += 1', // 11
      '  return [i for i in x if i]', // 12
    ].join('\n');
    const file = parseFile(src, 's.star');
    const at = (n: { pos: { line: number; col: number } }) => `${n.pos.line}:${n.pos.col}`;
    expect(file.stmts.map(at)).toEqual(['1:1', '2:1']);
    const def = file.stmts[1] as DefStmt;
    expect(def.body.map(at)).toEqual(['3:3', '7:3', '9:3', '11:3', '12:3']);
    const ifStmt = def.body[0]!;
    if (ifStmt.kind !== 'IfStmt') throw new Error(ifStmt.kind);
    expect(at(ifStmt.orelse[0]!)).toBe('5:3');
    expect(ifStmt.orelse[0]).toMatchObject({ kind: 'IfStmt', elif: true });
    const ret = def.body[4]!;
    if (ret.kind !== 'ReturnStmt' || ret.result?.kind !== 'Comprehension') throw new Error('shape');
    expect(ret.result.clauses.map(at)).toEqual(['12:13', '12:24']);
    expect(at(ret.result)).toBe('12:10');
  });

  test('literal raw text is kept', () => {
    const e = parseExpression('[0x1F, 1.50, r"a\\n", b\'\\x00\']', 'r.star');
    if (e.kind !== 'ListExpr') throw new Error(e.kind);
    expect(e.elems.map((x) => (x as { raw: string }).raw)).toEqual(['0x1F', '1.50', 'r"a\\n"', "b'\\x00'"]);
  });
});
