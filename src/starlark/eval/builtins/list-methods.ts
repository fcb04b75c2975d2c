import { positionalArgs, wantOptionalIndex } from '../args.js';
import { StarlarkError } from '../starlark-error.js';
import { iterableArg } from '../iteration.js';
import type { MethodImpl } from '../values/callable.js';
import { typeName } from '../values/describe.js';
import { equals } from '../values/equality.js';
import type { StarList } from '../values/list.js';
import { checkSize } from '../values/size-limit.js';
import { None, type Value } from '../values/value.js';

function indexArg(fn: string, v: Value): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return v < 0n ? -Number.MAX_SAFE_INTEGER : Number.MAX_SAFE_INTEGER;
  throw new StarlarkError(`${fn}: for parameter 1: got ${typeName(v)}, want int`);
}

function outOfRange(fn: string, i: number, n: number): never {
  if (n === 0) throw new StarlarkError(`${fn}: index ${i} out of range: empty list`);
  throw new StarlarkError(`${fn}: index ${i} out of range [${-n}:${n - 1}]`);
}

/** Every method of `list`. Mutators check frozenness and active iterations first. */
export const LIST_METHODS: ReadonlyMap<string, MethodImpl<StarList>> = new Map<string, MethodImpl<StarList>>([
  [
    'append',
    (_t, l, args, kwargs) => {
      if (args.length !== 1 || kwargs) positionalArgs('append', args, kwargs, 1, 1);
      l.checkMutable('append to');
      checkSize('list', l.elems.length + 1);
      l.elems.push(args[0]!);
      return None;
    },
  ],
  [
    'clear',
    (_t, l, args, kwargs) => {
      positionalArgs('clear', args, kwargs, 0, 0);
      l.checkMutable('clear');
      l.elems.length = 0;
      return None;
    },
  ],
  [
    'extend',
    (_t, l, args, kwargs) => {
      positionalArgs('extend', args, kwargs, 1, 1);
      l.checkMutable('extend');
      const elems = iterableArg('extend', args[0]!);
      checkSize('list', l.elems.length + elems.length);
      for (const e of elems) l.elems.push(e);
      return None;
    },
  ],
  [
    'index',
    (_t, l, args, kwargs) => {
      positionalArgs('index', args, kwargs, 1, 3);
      const n = l.elems.length;
      let start = wantOptionalIndex('index', 'start', args[1]) ?? 0;
      let end = wantOptionalIndex('index', 'end', args[2]) ?? n;
      if (start < 0) start = Math.max(0, start + n);
      if (end < 0) end = Math.max(0, end + n);
      end = Math.min(end, n);
      for (let i = start; i < end; i++) if (equals(l.elems[i]!, args[0]!)) return i;
      throw new StarlarkError('index: value not in list');
    },
  ],
  [
    'insert',
    (_t, l, args, kwargs) => {
      positionalArgs('insert', args, kwargs, 2, 2);
      l.checkMutable('insert into');
      checkSize('list', l.elems.length + 1);
      const n = l.elems.length;
      let i = indexArg('insert', args[0]!);
      if (i < 0) i = Math.max(0, i + n);
      if (i > n) i = n;
      l.elems.splice(i, 0, args[1]!);
      return None;
    },
  ],
  [
    'pop',
    (_t, l, args, kwargs) => {
      positionalArgs('pop', args, kwargs, 0, 1);
      const n = l.elems.length;
      const given = args.length > 0 ? indexArg('pop', args[0]!) : -1;
      const i = given < 0 ? given + n : given;
      if (i < 0 || i >= n) outOfRange('pop', given, n);
      l.checkMutable('pop from');
      return l.elems.splice(i, 1)[0]!;
    },
  ],
  [
    'remove',
    (_t, l, args, kwargs) => {
      positionalArgs('remove', args, kwargs, 1, 1);
      l.checkMutable('remove from');
      const i = l.elems.findIndex((e) => equals(e, args[0]!));
      if (i < 0) throw new StarlarkError('remove: element not found');
      l.elems.splice(i, 1);
      return None;
    },
  ],
]);
