import { positionalArgs } from '../args.js';
import { StarlarkError } from '../starlark-error.js';
import { elementsOf } from '../iteration.js';
import type { Kwargs, MethodImpl } from '../values/callable.js';
import { typeName } from '../values/describe.js';
import { StarSet } from '../values/set.js';
import { None, type Value } from '../values/value.js';

/** The iterable arguments of a variadic set method, each as a set. */
function others(fn: string, args: Value[], kwargs: Kwargs | null): StarSet[] {
  if (kwargs && kwargs.length > 0) throw new StarlarkError(`${fn}: does not accept keyword arguments`);
  return args.map((a, i) => {
    if (a instanceof StarSet) return a;
    const elems = elementsOf(a);
    if (elems === undefined) throw new StarlarkError(`${fn}: argument #${i + 1} is not iterable: ${typeName(a)}`);
    const s = new StarSet();
    for (const e of elems) s.add(e);
    return s;
  });
}

function copy(s: StarSet): StarSet {
  const out = new StarSet();
  for (const e of s.elements()) out.add(e);
  return out;
}

function oneIterable(fn: string, args: Value[], kwargs: Kwargs | null): StarSet {
  positionalArgs(fn, args, kwargs, 1, 1);
  return others(fn, args, null)[0]!;
}

/** Every method of `set` in the spec. Mutators fail on frozen sets even when they would change nothing. */
export const SET_METHODS: ReadonlyMap<string, MethodImpl<StarSet>> = new Map<string, MethodImpl<StarSet>>([
  [
    'add',
    (_t, s, args, kwargs) => {
      positionalArgs('add', args, kwargs, 1, 1);
      s.add(args[0]!);
      return None;
    },
  ],
  [
    'clear',
    (_t, s, args, kwargs) => {
      positionalArgs('clear', args, kwargs, 0, 0);
      if (s.table.size > 0) s.table.clear(); // clearing an empty frozen set is allowed, as in starlark-go
      return None;
    },
  ],
  [
    'difference',
    (_t, s, args, kwargs) => {
      const out = copy(s);
      for (const o of others('difference', args, kwargs)) for (const e of o.elements()) if (out.has(e)) out.table.delete(e);
      return out;
    },
  ],
  [
    'difference_update',
    (_t, s, args, kwargs) => {
      const os = others('difference_update', args, kwargs);
      s.table.checkMutable('delete from');
      for (const o of os) for (const e of o.elements()) s.table.delete(e);
      return None;
    },
  ],
  [
    'discard',
    (_t, s, args, kwargs) => {
      positionalArgs('discard', args, kwargs, 1, 1);
      s.table.checkMutable('delete from');
      s.table.delete(args[0]!);
      return None;
    },
  ],
  [
    'intersection',
    (_t, s, args, kwargs) => {
      let out = copy(s);
      for (const o of others('intersection', args, kwargs)) {
        const next = new StarSet();
        for (const e of out.elements()) if (o.has(e)) next.add(e);
        out = next;
      }
      return out;
    },
  ],
  [
    'intersection_update',
    (_t, s, args, kwargs) => {
      const os = others('intersection_update', args, kwargs);
      s.table.checkMutable('delete from');
      for (const e of s.elements()) if (!os.every((o) => o.has(e))) s.table.delete(e);
      return None;
    },
  ],
  [
    'isdisjoint',
    (_t, s, args, kwargs) => {
      const o = oneIterable('isdisjoint', args, kwargs);
      return s.elements().every((e) => !o.has(e));
    },
  ],
  ['issubset', (_t, s, args, kwargs) => s.isSubsetOf(oneIterable('issubset', args, kwargs))],
  ['issuperset', (_t, s, args, kwargs) => oneIterable('issuperset', args, kwargs).isSubsetOf(s)],
  [
    'pop',
    (_t, s, args, kwargs) => {
      positionalArgs('pop', args, kwargs, 0, 0);
      s.table.checkMutable('delete from');
      const first = s.table.first();
      if (!first) throw new StarlarkError('pop: empty set');
      s.table.delete(first[0]);
      return first[0];
    },
  ],
  [
    'remove',
    (_t, s, args, kwargs) => {
      positionalArgs('remove', args, kwargs, 1, 1);
      s.table.checkMutable('delete from');
      if (s.table.delete(args[0]!) === undefined) throw new StarlarkError('remove: missing key');
      return None;
    },
  ],
  [
    'symmetric_difference',
    (_t, s, args, kwargs) => {
      const o = oneIterable('symmetric_difference', args, kwargs);
      const out = new StarSet();
      for (const e of s.elements()) if (!o.has(e)) out.add(e);
      for (const e of o.elements()) if (!s.has(e)) out.add(e);
      return out;
    },
  ],
  [
    'symmetric_difference_update',
    (_t, s, args, kwargs) => {
      const o = oneIterable('symmetric_difference_update', args, kwargs);
      s.table.checkMutable('insert into');
      for (const e of o.elements()) {
        if (s.has(e)) s.table.delete(e);
        else s.add(e);
      }
      return None;
    },
  ],
  [
    'union',
    (_t, s, args, kwargs) => {
      const out = copy(s);
      for (const o of others('union', args, kwargs)) for (const e of o.elements()) out.add(e);
      return out;
    },
  ],
  [
    'update',
    (_t, s, args, kwargs) => {
      const os = others('update', args, kwargs);
      s.table.checkMutable('insert into');
      for (const o of os) for (const e of o.elements()) s.add(e);
      return None;
    },
  ],
]);
