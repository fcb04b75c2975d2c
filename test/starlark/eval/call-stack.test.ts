import { describe, expect, it } from 'vitest';
import { formatPosition } from '../../../src/core/index.js';
import { Builtin, execFile, None, Thread, type CallFrame, type Value } from '../../../src/starlark/index.js';

const at = (f: CallFrame | undefined) => (f ? `${f.name} ${formatPosition(f.pos)}` : 'none');

/** Runs `source` with a predeclared `where()` that records what the thread's call-stack API says. */
function record(source: string, more: ReadonlyMap<string, Value> = new Map()) {
  const seen: { stack: string[]; innermost: string; outermost: string; callee: string; beyond: string }[] = [];
  const where = new Builtin('where', (thread) => {
    const callee = thread.callSyntax(0)!;
    seen.push({
      stack: thread.callStack().map(at),
      innermost: at(thread.callFrame(0)),
      outermost: at(thread.callFrame(thread.depth - 1)),
      callee: `${callee.fn.kind === 'Identifier' ? callee.fn.name : '?'} from ${callee.pos.line}:${callee.pos.col}`,
      beyond: at(thread.callFrame(thread.depth)),
    });
    return None;
  });
  const thread = new Thread('t', {}, { recursion: true });
  execFile(thread, 'main.star', source, new Map([['where', where], ...more]));
  return { seen, thread };
}

describe('the thread call-stack API', () => {
  it('gives each frame its function and the file:line:col of the call it is making, inside nested calls', () => {
    const { seen, thread } = record(
      [
        'def inner(x):',
        '    return  where()', // 2:18 is the '(' of where(), 2:13 its start
        'def outer():',
        '    y = [inner(i) for i in range(1)]', // 4:15
        '    return y',
        'z = 1 + len(outer())', // 6:18
        'where()', // 7:6
      ].join('\n') + '\n',
    );
    expect(seen[0]).toEqual({
      stack: ['<toplevel> main.star:6:18', 'outer main.star:4:15', 'inner main.star:2:18'],
      innermost: 'inner main.star:2:18',
      outermost: '<toplevel> main.star:6:18',
      callee: 'where from 2:13',
      beyond: 'none',
    });
    expect(seen[1]).toEqual({
      stack: ['<toplevel> main.star:7:6'],
      innermost: '<toplevel> main.star:7:6',
      outermost: '<toplevel> main.star:7:6',
      callee: 'where from 7:1',
      beyond: 'none',
    });
    expect(thread.depth).toBe(0);
    expect(thread.callStack()).toEqual([]);
  });

  it('sees calls made with keywords, through methods, lambdas and builtins that call back', () => {
    const { seen } = record(
      [
        'def key(x):',
        '    where(k = 1)', // 2:10
        '    return x',
        'def f(**kw):',
        '    return sorted([2, 1], key = kw["key"])', // 5:18
        'r = f(key = key)', // 6:6
        'l = (lambda: where())()', // 7:19 inside the lambda; the lambda is called at 7:22
      ].join('\n') + '\n',
    );
    expect(seen.length).toBe(3); // sorted calls key once per element
    expect(seen[0]!.stack).toEqual(['<toplevel> main.star:6:6', 'f main.star:5:18', 'key main.star:2:10']);
    expect(seen[2]!.stack).toEqual(['<toplevel> main.star:7:22', 'lambda main.star:7:19']);
    expect(seen[2]!.callee).toBe('where from 7:14');
  });

  it('counts the frames of a module loaded while another runs on the same thread, and pops them', () => {
    const inner = new Thread('t');
    const depths: number[] = [];
    const probe = new Builtin('probe', (t) => {
      depths.push(t.depth);
      if (depths.length === 1) execFile(t, 'lib.star', 'probe()\n', new Map([['probe', probe]]));
      return None;
    });
    execFile(inner, 'main.star', 'def f():\n    probe()\nf()\n', new Map([['probe', probe]]));
    expect(depths).toEqual([2, 3]);
    expect(inner.depth).toBe(0);
  });
});
