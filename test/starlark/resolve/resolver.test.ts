import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { StarlarkStaticErrors, resolveFile, resolveFileCollectingErrors, type DialectOptions } from '../../../src/starlark/resolve/index.js';
import {
  parseFile,
  type AssignStmt,
  type Binding,
  type CallExpr,
  type DefStmt,
  type ExprStmt,
  type File,
  type Identifier,
  type LambdaExpr,
  type ReturnStmt,
} from '../../../src/starlark/syntax/index.js';
import { readChunks } from './star-chunks.js';

const PREDECLARED = new Set(['P', 'print']);
const UNIVERSAL = new Set(['U', 'len', 'None', 'True', 'False', 'set']);
const isPredeclared = (n: string) => PREDECLARED.has(n);
const isUniversal = (n: string) => UNIVERSAL.has(n);

function optionsFrom(names: ReadonlySet<string>): DialectOptions {
  return {
    set: names.has('set'),
    globalReassign: names.has('globalreassign'),
    loadBindsGlobally: names.has('loadbindsglobally'),
    while: names.has('while'),
    topLevelControl: names.has('toplevelcontrol'),
  };
}

describe('resolver: static-errors.star', () => {
  const path = new URL('./testdata/static-errors.star', import.meta.url);
  const chunks = readChunks(readFileSync(path, 'utf8'));
  test.each(chunks.map((c) => [`chunk at line ${c.firstLine}`, c] as const))('%s', (_, chunk) => {
    const file = parseFile(chunk.source, 'testdata/static-errors.star');
    // Sets, not predicates, so that predeclared and universal names are offered as spelling hints.
    const errors = resolveFileCollectingErrors(file, optionsFrom(chunk.options), PREDECLARED, UNIVERSAL);
    const asLine = (e: (typeof errors)[number]) => `${e.pos.line}: ${e.message}`;
    const unmatched = [...errors];
    for (const want of chunk.expected) {
      const i = unmatched.findIndex((e) => e.pos.line === want.line && want.pattern.test(e.format()));
      expect(i, `expected error on line ${want.line} matching ${want.pattern}; got:\n${errors.map(asLine).join('\n')}`).toBeGreaterThanOrEqual(0);
      unmatched.splice(i, 1);
    }
    expect(unmatched.map(asLine).join('\n'), 'unexpected errors').toBe('');
  });
});

function resolve(src: string, options: DialectOptions = {}): File {
  const file = parseFile(src, 'r.star');
  resolveFile(file, options, isPredeclared, isUniversal);
  return file;
}

function show(b: Binding | null): string {
  return b ? `${b.scope}${b.index >= 0 ? ':' + b.index : ''}` : 'null';
}

describe('resolver: bindings and frame layout', () => {
  test('globals, predeclared and universal names', () => {
    const file = resolve('a = 1\nb = a + len(P)\n');
    const second = file.stmts[1] as AssignStmt;
    expect(show((second.lhs as Identifier).binding)).toBe('global:1');
    const sum = second.rhs;
    if (sum.kind !== 'BinaryExpr') throw new Error(sum.kind);
    expect(show((sum.x as Identifier).binding)).toBe('global:0');
    const call = sum.y as CallExpr;
    expect(show((call.fn as Identifier).binding)).toBe('universal');
    expect(show((call.args[0]!.value as Identifier).binding)).toBe('predeclared');
    expect(file.module!.globals.map((g) => g.name)).toEqual(['a', 'b']);
    expect(file.module!.locals).toEqual([]);
  });

  test('parameters first, *args and **kwargs after the named ones, then other locals', () => {
    const file = resolve('def f(a, b=1, *args, c, **kw):\n  x = a\n  return x\n');
    const fn = (file.stmts[0] as DefStmt).fn!;
    expect(fn.locals.map((b) => `${b.name}=${show(b)}`)).toEqual(['a=local:0', 'b=local:1', 'c=local:2', 'args=local:3', 'kw=local:4', 'x=local:5']);
    expect(fn).toMatchObject({ numParams: 3, numKwonlyParams: 1, hasVarargs: true, hasKwargs: true, cells: [] });
    expect(fn.freeVars).toEqual([]);
  });

  test('bare * counts keyword-only parameters without a slot', () => {
    const fn = (resolve('def f(a, *, b, c=2): pass').stmts[0] as DefStmt).fn!;
    expect(fn).toMatchObject({ numParams: 3, numKwonlyParams: 2, hasVarargs: false, hasKwargs: false });
  });

  test('captured locals become cells; inner functions list them as free variables', () => {
    const src = ['def outer(a):', '  b = 1', '  def middle():', '    def inner():', '      return a + b', '    return inner', '  return middle'].join('\n');
    const outer = resolve(src).stmts[0] as DefStmt;
    const middle = outer.body[1] as DefStmt;
    const inner = middle.body[0] as DefStmt;
    expect(outer.fn!.locals.map((b) => `${b.name}=${show(b)}`)).toEqual(['a=cell:0', 'b=cell:1', 'middle=local:2']);
    expect(outer.fn!.cells).toEqual([0, 1]);
    // middle captures a and b from outer's cells, only to pass them on to inner.
    expect(middle.fn!.freeVars.map((b) => `${b.name}=${show(b)}`)).toEqual(['a=cell:0', 'b=cell:1']);
    expect(inner.fn!.freeVars.map((b) => `${b.name}=${show(b)}`)).toEqual(['a=free:0', 'b=free:1']);
    const ret = inner.body[0] as ReturnStmt;
    if (ret.result?.kind !== 'BinaryExpr') throw new Error('shape');
    expect(show((ret.result.x as Identifier).binding)).toBe('free:0');
    expect(show((ret.result.y as Identifier).binding)).toBe('free:1');
    // The same variable shares one Binding object in its defining function.
    expect(outer.fn!.locals[0]).toBe(middle.fn!.freeVars[0]);
  });

  test('a lambda capturing a parameter', () => {
    const def = resolve('def f(x):\n  return lambda y: x + y\n').stmts[0] as DefStmt;
    const lambda = (def.body[0] as ReturnStmt).result as LambdaExpr;
    expect(def.fn!.cells).toEqual([0]);
    expect(lambda.fn!.name).toBe('lambda');
    expect(lambda.fn!.locals.map((b) => b.name)).toEqual(['y']);
    expect(lambda.fn!.freeVars.map((b) => `${b.name}=${show(b)}`)).toEqual(['x=cell:0']);
  });

  test('top-level comprehension variables and loaded names are module locals', () => {
    const file = resolve('load("m.star", "ld")\nout = [v * ld for v in ld]\n');
    expect(file.module!.locals.map((b) => `${b.name}=${show(b)}`)).toEqual(['ld=local:0', 'v=local:1']);
    expect(file.module!.globals.map((b) => b.name)).toEqual(['out']);
  });

  test('with loadBindsGlobally, loaded names are globals', () => {
    const file = resolve('load("m.star", "ld")\nout = ld\n', { loadBindsGlobally: true });
    expect(file.module!.globals.map((b) => `${b.name}=${show(b)}`)).toEqual(['ld=global:0', 'out=global:1']);
  });

  test('a function at top level capturing a comprehension variable makes a module cell', () => {
    const file = resolve('fs = [lambda: i for i in [1, 2]]\n');
    expect(file.module!.locals.map((b) => `${b.name}=${show(b)}`)).toEqual(['i=cell:0']);
    expect(file.module!.cells).toEqual([0]);
  });

  test('comprehension variables inside a function are locals of that function', () => {
    const def = resolve('def f(xs):\n  return [x for x in xs if x]\n').stmts[0] as DefStmt;
    expect(def.fn!.locals.map((b) => `${b.name}=${show(b)}`)).toEqual(['xs=local:0', 'x=local:1']);
  });

  test('with globalReassign, a use before a later binding refers to the predeclared name', () => {
    const file = resolve('print(1)\nprint = 2\nprint(3)\n', { globalReassign: true });
    const first = ((file.stmts[0] as ExprStmt).expr as CallExpr).fn as Identifier;
    const last = ((file.stmts[2] as ExprStmt).expr as CallExpr).fn as Identifier;
    expect(show(first.binding)).toBe('predeclared');
    expect(show(last.binding)).toBe('global:0');
  });

  test('resolveFile throws every error at once, in source order', () => {
    const file = parseFile('a = b\nbreak\nc = d\n', 'e.star');
    let thrown: unknown;
    try {
      resolveFile(file, {}, isPredeclared, isUniversal);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(StarlarkStaticErrors);
    const errors = thrown as StarlarkStaticErrors;
    expect(errors.format()).toBe('e.star:1:5: undefined: b');
    expect(errors.formatAll()).toBe(['e.star:1:5: undefined: b', 'e.star:2:1: break not in a loop', 'e.star:3:5: undefined: d'].join('\n'));
  });
});

describe('resolver: name sets', () => {
  test('predicates work, but only sets give hints for predeclared and universal names', () => {
    const src = 'x = lenn(glub)\n';
    const withPredicates = resolveFileCollectingErrors(parseFile(src, 'h.star'), {}, isPredeclared, isUniversal);
    expect(withPredicates.map((e) => e.message)).toEqual(['undefined: lenn', 'undefined: glub']);
    const predeclared = new Map([['glob', 1]]);
    const withSets = resolveFileCollectingErrors(parseFile(src, 'h.star'), {}, predeclared, UNIVERSAL);
    expect(withSets.map((e) => e.message)).toEqual(['undefined: lenn (did you mean len?)', 'undefined: glub (did you mean glob?)']);
  });
});

describe('resolver: more scoping cases', () => {
  test('a lambda in a comprehension captures the comprehension variable as a cell of the function', () => {
    const def = resolve('def f(ys):\n  return [lambda: y for y in ys]\n').stmts[0] as DefStmt;
    expect(def.fn!.locals.map((b) => `${b.name}=${show(b)}`)).toEqual(['ys=local:0', 'y=cell:1']);
    expect(def.fn!.cells).toEqual([1]);
  });

  test('two comprehensions reusing a name get separate slots', () => {
    const def = resolve('def f(xs):\n  a = [x for x in xs]\n  b = [x for x in a]\n  return b\n').stmts[0] as DefStmt;
    expect(def.fn!.locals.map((b) => b.name)).toEqual(['xs', 'x', 'a', 'x', 'b']); // a right side binds before its target
  });

  test('the first iterable of a comprehension is resolved outside it', () => {
    // `x` in `for x in x` (first clause) refers to the global x, not the comprehension variable.
    const file = resolve('x = [1]\ny = [x for x in x]\n');
    const comp = (file.stmts[1] as AssignStmt).rhs;
    if (comp.kind !== 'Comprehension') throw new Error(comp.kind);
    const clause = comp.clauses[0]!;
    if (clause.kind !== 'ForClause') throw new Error(clause.kind);
    expect(show((clause.iterable as Identifier).binding)).toBe('global:0');
    expect(show((clause.vars as Identifier).binding)).toBe('local:0');
    expect(show((comp.body as Identifier).binding)).toBe('local:0');
  });

  test('parameter defaults are resolved in the enclosing scope', () => {
    const def = resolve('def outer(a):\n  def inner(b = a):\n    return b\n  return inner\n').stmts[0] as DefStmt;
    const inner = def.body[0] as DefStmt;
    expect(show((inner.params[0]!.default as Identifier).binding)).toBe('local:0');
    expect(inner.fn!.freeVars).toEqual([]);
    expect(def.fn!.cells).toEqual([]);
  });

  test('a name assigned anywhere in a function is local throughout it', () => {
    const def = resolve('g = 1\ndef f():\n  y = g\n  g = 2\n  return y\n').stmts[1] as DefStmt;
    const first = def.body[0] as AssignStmt;
    expect(show((first.rhs as Identifier).binding)).toBe('local:1');
    expect(def.fn!.locals.map((b) => b.name)).toEqual(['y', 'g']);
  });

  test('bindings remember their first binding occurrence', () => {
    const file = resolve('def f():\n  return 1\nx = f\n');
    const g = file.module!.globals;
    expect(g.map((b) => [b.name, b.first!.pos.line, b.first!.pos.col])).toEqual([
      ['f', 1, 5],
      ['x', 3, 1],
    ]);
  });

  test('dot names and keyword argument names are not resolved', () => {
    const file = resolve('P(key = P.attr)\n');
    const call = (file.stmts[0] as ExprStmt).expr as CallExpr;
    expect(call.args[0]!.name!.binding).toBeNull();
    const dot = call.args[0]!.value;
    if (dot.kind !== 'DotExpr') throw new Error(dot.kind);
    expect(dot.name.binding).toBeNull();
    expect(show((dot.x as Identifier).binding)).toBe('predeclared');
  });

  test('a recursive reference to the function itself is a global use', () => {
    const def = resolve('def fib(n):\n  return fib(n - 1)\n').stmts[0] as DefStmt;
    const call = (def.body[0] as ReturnStmt).result as CallExpr;
    expect(show((call.fn as Identifier).binding)).toBe('global:0');
  });
});
