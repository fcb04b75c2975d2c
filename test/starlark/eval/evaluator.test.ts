import { describe, expect, it } from 'vitest';
import {
  StarObject,
  EvalError,
  execFile,
  jsonModule,
  type StarDict,
  StarlarkStaticErrors,
  type StarList,
  structBuiltin,
  Thread,
  type DialectOptions,
  type ModuleGlobals,
  type Value,
} from '../../../src/starlark/index.js';

interface Run {
  globals: ModuleGlobals;
  printed: string[];
}

function run(source: string, options: DialectOptions = {}, modules: Record<string, string> = {}): Run {
  const printed: string[] = [];
  const predeclared = new Map<string, Value>([
    ['json', jsonModule()],
    ['struct', structBuiltin],
  ]);
  const cache = new Map<string, ModuleGlobals>();
  const thread = new Thread(
    'test',
    {
      print: (_t, msg) => printed.push(msg),
      load: (t, name) => {
        const src = modules[name];
        if (src === undefined) throw new Error(`no module ${name}`);
        let g = cache.get(name);
        if (!g) cache.set(name, (g = execFile(new Thread(name, { print: (_x, m) => printed.push(m) }, t.options), name, src, predeclared)));
        return g;
      },
    },
    options,
  );
  return { globals: execFile(thread, 'main.star', source, predeclared), printed };
}

function evalError(source: string, options: DialectOptions = {}): EvalError {
  try {
    run(source, options);
  } catch (e) {
    if (e instanceof EvalError) return e;
    throw e;
  }
  throw new Error('no error');
}

describe('execFile', () => {
  it('runs a module and freezes its globals', () => {
    const { globals, printed } = run('x = [1, 2]\ndef f():\n    x.append(3)\nprint(len(x))\n');
    expect(printed).toEqual(['2']);
    const x = globals.get('x') as StarList;
    expect(x.frozen).toBe(true);
    expect(() => x.checkMutable('append to')).toThrow('cannot append to frozen list');
  });

  it('loads modules through the thread hook', () => {
    const { printed } = run(
      'load("lib.star", "double", y = "x")\nprint(double(y))\n',
      {},
      {
        'lib.star': 'x = 21\ndef double(n):\n    return 2 * n\n',
      },
    );
    expect(printed).toEqual(['42']);
  });

  it('evaluates control flow, closures, comprehensions and unpacking', () => {
    const src = `
def f():
    out = []
    for i in range(10):
        if i == 7:
            break
        if i % 2:
            continue
        out.append(i)
    total = 0
    for a, (b, c) in [(1, (2, 3)), (4, (5, 6))]:
        total += a * b * c
    def adder(k):
        return lambda v: v + k
    return out, total, adder(10)(5), {k: v for k, v in zip(["a", "b"], [1, 2])}, [x * y for x in [1, 2] for y in [3, 4] if x != y]
r = f()
`;
    const r = run(src).globals.get('r');
    expect(String((r as { repr(p: unknown[]): string }).repr([]))).toBe('([0, 2, 4, 6], 126, 15, {"a": 1, "b": 2}, [3, 4, 6, 8])');
  });

  it('binds arguments like starlark-go', () => {
    const src = `
def f(a, b = 2, *args, c, d = 4, **kw):
    return (a, b, args, c, d, kw)
r = [f(1, c = 3), f(1, 2, 3, 4, c = 5, e = 6), f(*[1, 2], **{"c": 7})]
`;
    const r = run(src).globals.get('r') as StarList;
    expect(r.repr([])).toBe('[(1, 2, (), 3, 4, {}), (1, 2, (3, 4), 5, 4, {"e": 6}), (1, 2, (), 7, 4, {})]');
    const cases: [string, string][] = [
      ['def f(a): pass\nf()', 'function f missing 1 argument (a)'],
      ['def f(a): pass\nf(1, 2)', 'function f accepts 1 positional argument (2 given)'],
      ['def f(a): pass\nf(b = 1)', 'function f got an unexpected keyword argument "b"'],
      ['def f(a): pass\nf(1, a = 1)', 'function f got multiple values for parameter "a"'],
      ['def f(): pass\nf(1)', 'function f accepts no arguments (1 given)'],
      ['len(1, 2)', 'len: got 2 arguments, want 1'],
      ['"a".startswith(1)', 'startswith: got int, want string or tuple of string'],
    ];
    for (const [code, message] of cases) expect(evalError(code).message, code).toBe(message);
  });

  it('evaluates the target of an augmented assignment once and extends lists in place', () => {
    const src = `
calls = []
def key():
    calls.append(1)
    return 0
def f():
    d = [[1]]
    alias = d[0]
    d[key()] += [2]
    return alias, len(calls)
r = f()
`;
    expect((run(src).globals.get('r') as StarList).repr([])).toBe('([1, 2], 1)');
  });

  it('reports errors at the failing operator with the call stack', () => {
    const e = evalError('def g():\n    return 1 // 0\ndef f():\n    return g()\nf()\n');
    expect(e.message).toBe('floored division by zero');
    expect(e.format()).toBe('main.star:2:14: floored division by zero');
    expect(e.callStack.map((f) => `${f.name}@${f.pos.line}:${f.pos.col}`)).toEqual(['g@2:14', 'f@4:13', '<toplevel>@5:2']);
    expect(e.backtrace()).toContain('main.star:4:13: in f');
  });

  it('forbids recursion unless the option allows it, and stops runaway recursion cleanly', () => {
    const src = 'def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\nr = f(50)\n';
    expect(evalError(src).message).toBe('function f called recursively');
    expect(run(src, { recursion: true }).globals.get('r')).toBe(50);
    expect(evalError('def f(n):\n    return f(n + 1)\nf(0)\n', { recursion: true }).message).toBe('Starlark stack overflow');
  });

  it('reports variables used before assignment', () => {
    expect(evalError('def f():\n    print(x)\n    x = 1\nf()\n').message).toBe('local variable x referenced before assignment');
    expect(evalError('def f():\n    return y\nf()\ny = 1\n').message).toBe('global variable y referenced before assignment');
  });

  it('forbids mutating a container while iterating it', () => {
    expect(evalError('def f():\n    d = {1: 2}\n    for k in d:\n        d[3] = 4\nf()\n').message).toBe('cannot insert into hash table during iteration');
  });

  it('unpacks with exact counts', () => {
    expect(evalError('a, b = 1, 2, 3').message).toBe('too many values to unpack (got 3, want 2)');
    expect(evalError('a, b = [1]').message).toBe('too few values to unpack (got 1, want 2)');
    expect(evalError('a, b = 1').message).toBe('got int in sequence assignment');
  });

  it('reports static errors before running anything', () => {
    expect(() => run('print(1)\nx = undefined_name\n')).toThrow(StarlarkStaticErrors);
  });

  it('formats with % and str.format', () => {
    const src = 'r = ["%s %r %d %x" % ("a", "b", 3.7, 255), "%(k)s" % {"k": 1}, "{} {x}".format("q", x = [1]), "{{}}".format()]';
    expect((run(src).globals.get('r') as StarList).repr([])).toBe('["a \\"b\\" 3 ff", "1", "q [1]", "{}"]');
    expect(evalError('"%d" % "x"').message).toBe('%d format requires integer: cannot convert string to int');
    expect(evalError('"{0} {}".format(1, 2)').message).toBe('format: cannot switch from manual field specification to automatic field numbering');
  });

  it('provides json and struct to embedders', () => {
    const src = 'r = json.encode(struct(b = [1, 2.5, None], a = {"k": True}))\nd = json.decode(\'{"x": [1, 2.0, "s"]}\')\n';
    const g = run(src).globals;
    expect(g.get('r')).toBe('{"a":{"k":true},"b":[1,2.5,null]}');
    expect((g.get('d') as StarDict).repr([])).toBe('{"x": [1, 2.0, "s"]}');
  });

  it('keeps exact semantics in generated arithmetic (overflow, floats, NaN, strings, errors)', () => {
    const src = `
def f(a, b, x, s):
    big = a * b + a
    nan = x - x if False else float("nan")
    return [big, big // 3, -a, a << 60, (a & 255) ^ (b | 1), 7 // 2 * 1.0, 1 / 2, 3 - 0.5, x * 2 < 10, nan < x, nan == nan, s + "!", a % -7, -a // 7]
r = f(9007199254740991, 3, 2.5, "hi")
`;
    expect((run(src).globals.get('r') as StarList).repr([])).toBe(
      '[36028797018963964, 12009599006321321, -9007199254740991, 10384593717069654104139488051593216, 252, 3.0, 0.5, 2.5, True, False, True, "hi!", -4, -1286742750677285]',
    );
    const e = evalError('def f(n):\n    return (n + 1) * (n - "x")\nf(1)\n');
    expect(e.message).toBe('unknown binary op: int - string');
    expect(e.format()).toBe('main.star:2:25: unknown binary op: int - string');
    expect(evalError('def f():\n    x = 1 + y\n    y = 2\nf()\n').message).toBe('local variable y referenced before assignment');
  });

  it('lets embedder values define binary operators (as select() needs)', () => {
    class Concat extends StarObject {
      constructor(readonly parts: readonly Value[]) {
        super();
      }
      get type(): string {
        return 'concat';
      }
      repr(): string {
        return `concat(${this.parts.length})`;
      }
      override binary(op: string, other: Value, side: 'left' | 'right'): Value | undefined {
        if (op !== '+') return undefined;
        return new Concat(side === 'left' ? [...this.parts, other] : [other, ...this.parts]);
      }
    }
    const thread = new Thread('t');
    const g = execFile(thread, 'x.star', 'a = [1] + c + [2]\n', new Map<string, Value>([['c', new Concat([])]]));
    expect((g.get('a') as Concat).parts.length).toBe(2);
    expect(() => execFile(thread, 'y.star', 'b = c - 1\n', new Map<string, Value>([['c', new Concat([])]]))).toThrow('unknown binary op: concat - int');
  });
});
