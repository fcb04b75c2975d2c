import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseQuery, QuerySyntaxError, tokenize, type QueryExpr } from '../../src/query/index.js';

/** The tree as compact text: `(op a b)`, `fn(args)`, `let x = v in b`, `$x`, `set(a b)`. */
function show(e: QueryExpr): string {
  switch (e.kind) {
    case 'target':
      return e.text;
    case 'variable':
      return `$${e.name}`;
    case 'let':
      return `let ${e.name} = ${show(e.value)} in ${show(e.body)}`;
    case 'set':
      return `set(${e.words.map((w) => w.text).join(' ')})`;
    case 'binary':
      return `(${e.op} ${e.operands.map(show).join(' ')})`;
    case 'function':
      return `${e.name}(${e.args.map((a) => (a.kind === 'expression' ? show(a.expr) : a.kind === 'word' ? `'${a.text}'` : `#${a.value}`)).join(', ')})`;
  }
}

const parse = (q: string) => show(parseQuery(q));

describe('query lexer', () => {
  it('splits words, quoted words, keywords and punctuation with 1-based columns', () => {
    expect(tokenize(`deps(//a:b, 2) + "let" ^ 'x y'`).map((t) => `${t.kind}:${t.text}@${t.column}`)).toEqual([
      'word:deps@1',
      '(:(@5',
      'word://a:b@6',
      ',:,@11',
      'word:2@13',
      '):)@14',
      '+:+@16',
      'word:let@18',
      '^:^@24',
      'word:x y@26',
      'eof:@31',
    ]);
    // Words continue with '-' and '*' and take any other starting character, as Bazel's lexer does.
    expect(tokenize('a-b //x:* !').map((t) => t.text)).toEqual(['a-b', '//x:*', '!', '']);
    expect(tokenize('let x = y in $x').map((t) => t.kind)).toEqual(['let', 'word', '=', 'word', 'in', 'word', 'eof']);
  });

  it('rejects an unclosed quote with its column', () => {
    expect(() => tokenize('a + "b')).toThrow("unclosed quotation at column 5 of query 'a + \"b'");
  });
});

describe('query parser', () => {
  it('gives every set operator the same precedence, left to right (Bazel)', () => {
    expect(parse('a + b - c')).toBe('(except (union a b) c)');
    expect(parse('a ^ b union c intersect d')).toBe('(intersect (union (intersect a b) c) d)');
    expect(parse('a + b + c')).toBe('(union a b c)');
    expect(parse('a - (b ^ c)')).toBe('(except a (intersect b c))');
  });

  it('parses let (the body extends to the right), variables, set() and functions with typed arguments', () => {
    expect(parse('let v = //a:b in deps($v) - $v')).toBe('let v = //a:b in (except deps($v) $v)');
    expect(parse('a + let v = b in $v ^ c')).toBe('(union a let v = b in (intersect $v c))');
    expect(parse('set(//a:b c/... "d e")')).toBe('set(//a:b c/... d e)');
    expect(parse('set()')).toBe('set()');
    expect(parse('deps(//a, 3)')).toBe('deps(//a, #3)');
    expect(parse('rdeps(//..., //a:b)')).toBe('rdeps(//..., //a:b)');
    expect(parse('attr(tags, \'foo bar\', kind("cc_.* rule", //...))')).toBe("attr('tags', 'foo bar', kind('cc_.* rule', //...))");
    expect(parse('some(//a:all, 2)')).toBe('some(//a:all, #2)');
    expect(parse('rbuildfiles(a/BUILD, b/defs.bzl)')).toBe("rbuildfiles('a/BUILD', 'b/defs.bzl')");
    expect(parse('"deps"')).toBe('deps');
  });

  it("reports errors with the column and Bazel's wording", () => {
    const error = (q: string) => {
      try {
        parseQuery(q);
      } catch (e) {
        expect(e).toBeInstanceOf(QuerySyntaxError);
        return (e as Error).message;
      }
      throw new Error(`${q} parsed`);
    };
    expect(error('(//a:all')).toBe("Error while parsing '(//a:all': premature end of input");
    expect(error('a b')).toBe("Error while parsing 'a b': syntax error at 'b' (column 3)");
    expect(error('deps(a,)')).toBe("Error while parsing 'deps(a,)': syntax error at ')' (column 8)");
    expect(error('deps(a, b)')).toBe("Error while parsing 'deps(a, b)': expected an integer literal: 'b' (column 9)");
    expect(error('deps(a, 99999999999)')).toContain('expected an integer literal');
    expect(error('nosuch(a)')).toBe("Error while parsing 'nosuch(a)': unknown function 'nosuch' (column 1)");
    expect(error('kind(a)')).toBe("Error while parsing 'kind(a)': syntax error at ')' (column 7)");
    expect(error('*foo')).toBe("Error while parsing '*foo': target literal must not begin with (*): *foo (column 1)");
    expect(error('let $x = a in b')).toContain("invalid variable name '$x'");
    expect(error('set($x)')).toContain('set() takes target patterns');
    expect(error('a + + b')).toBe("Error while parsing 'a + + b': syntax error at '+ b' (column 5)");
  });

  // Any input gives a tree or a QuerySyntaxError, never another exception or a hang.
  it('survives arbitrary input (property test)', () => {
    const vocabulary = [
      'deps',
      'rdeps',
      'somepath',
      'kind',
      'attr',
      'rbuildfiles',
      'some',
      'set',
      'let',
      'in',
      'x',
      '$x',
      '=',
      '(',
      ')',
      ',',
      '+',
      '-',
      '^',
      'union',
      'except',
      'intersect',
      '//a:b',
      '//...',
      '"q r"',
      "'s",
      '3',
      '-1',
      '*',
      ' ',
    ];
    const tokens = fc.array(fc.constantFrom(...vocabulary), { maxLength: 24 }).map((ws) => ws.join(' '));
    const check = (q: string) => {
      try {
        parseQuery(q);
      } catch (e) {
        if (!(e instanceof QuerySyntaxError)) throw e;
      }
    };
    fc.assert(fc.property(tokens, check), { numRuns: 2000 });
    fc.assert(fc.property(fc.string({ maxLength: 60 }), check), { numRuns: 2000 });
  });
});
