import { positionalArgs, wantString } from '../args.js';
import { EvalError, StarlarkError } from '../starlark-error.js';
import { Builtin, type Kwargs } from '../values/callable.js';
import { StarModule } from '../values/struct.js';
import type { Value } from '../values/value.js';
import { None } from '../values/value.js';

/** Translates an RE2-style pattern (as used by starlark-go's tests) to a JS RegExp. */
function compilePattern(pattern: string): RegExp {
  let flags = '';
  let src = pattern;
  // JS has no inline flag groups: lift leading (?i), (?s), (?m) groups into flags.
  for (let m = /^\(\?([ism]+)\)/.exec(src); m; m = /^\(\?([ism]+)\)/.exec(src)) {
    for (const f of m[1]!) if (!flags.includes(f)) flags += f;
    src = src.slice(m[0].length);
  }
  try {
    return new RegExp(src, flags);
  } catch (e) {
    throw new StarlarkError(`matches: invalid regular expression ${JSON.stringify(pattern)}: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * The helpers `kiln starlark --assert` predeclares so that an assert module can be written in plain
 * Starlark: catch(f), matches(pattern, s), module(name, **kwargs), _freeze(x).
 */
export function assertHelpers(): Map<string, Value> {
  return new Map<string, Value>([
    [
      'catch',
      new Builtin('catch', (thread, args, kwargs) => {
        positionalArgs('catch', args, kwargs, 1, 1);
        try {
          thread.call(args[0]!, []);
          return None;
        } catch (e) {
          if (e instanceof EvalError || e instanceof StarlarkError) return e.message;
          if (e instanceof RangeError) return e.message.includes('call stack') ? 'Starlark stack overflow' : `value too large: ${e.message}`;
          throw e;
        }
      }),
    ],
    [
      'matches',
      new Builtin('matches', (_t, args, kwargs) => {
        positionalArgs('matches', args, kwargs, 2, 2);
        const pattern = wantString('matches', 1, args[0]!);
        const s = wantString('matches', 2, args[1]!);
        return compilePattern(pattern).test(s);
      }),
    ],
    [
      'module',
      new Builtin('module', (_t, args, kwargs: Kwargs | null) => {
        positionalArgs('module', args, null, 1, 1);
        const name = wantString('module', 1, args[0]!);
        return new StarModule(name, new Map(kwargs ?? []));
      }),
    ],
    [
      '_freeze',
      new Builtin('freeze', (_t, args, kwargs) => {
        positionalArgs('freeze', args, kwargs, 1, 1);
        const x = args[0]!;
        if (typeof x === 'object') x.freeze();
        return x;
      }),
    ],
  ]);
}
