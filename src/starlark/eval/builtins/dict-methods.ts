import { positionalArgs } from '../args.js';
import { StarlarkError } from '../starlark-error.js';
import { elementsOf } from '../iteration.js';
import { dictEntries } from '../operators.js';
import type { Kwargs, MethodImpl } from '../values/callable.js';
import { repr, typeName } from '../values/describe.js';
import { StarDict } from '../values/dict.js';
import { StarList, StarTuple } from '../values/list.js';
import { None, type Value } from '../values/value.js';

/**
 * Adds the entries of `dict(x, **kwargs)` / `d.update(x, **kwargs)` to d: x is a dict or an
 * iterable of pairs, then the keyword arguments.
 */
export function updateDict(fn: string, d: StarDict, args: Value[], kwargs: Kwargs | null): void {
  if (args.length > 1) throw new StarlarkError(`${fn}: got ${args.length} arguments, want at most 1`);
  if (args.length === 1) {
    const x = args[0]!;
    if (x instanceof StarDict) {
      for (const [k, v] of dictEntries(x)) d.set(k, v);
    } else {
      const items = elementsOf(x);
      if (items === undefined) throw new StarlarkError(`${fn}: got ${typeName(x)}, want iterable`);
      items.forEach((item, i) => {
        const pair = elementsOf(item);
        if (pair === undefined) {
          throw new StarlarkError(`${fn}: dictionary update sequence element #${i} is not iterable (${typeName(item)})`);
        }
        if (pair.length !== 2) {
          throw new StarlarkError(`${fn}: dictionary update sequence element #${i} has length ${pair.length}, want 2`);
        }
        d.set(pair[0]!, pair[1]!);
      });
    }
  }
  if (kwargs) {
    const seen = new Set<string>();
    for (const [k, v] of kwargs) {
      if (seen.has(k)) throw new StarlarkError(`${fn}: duplicate keyword arg: ${repr(k)}`);
      seen.add(k);
      d.set(k, v);
    }
  }
}

/** Every method of `dict`. */
export const DICT_METHODS: ReadonlyMap<string, MethodImpl<StarDict>> = new Map<string, MethodImpl<StarDict>>([
  [
    'clear',
    (_t, d, args, kwargs) => {
      positionalArgs('clear', args, kwargs, 0, 0);
      d.table.clear();
      return None;
    },
  ],
  [
    'get',
    (_t, d, args, kwargs) => {
      positionalArgs('get', args, kwargs, 1, 2);
      return d.get(args[0]!) ?? args[1] ?? None;
    },
  ],
  [
    'items',
    (_t, d, args, kwargs) => {
      positionalArgs('items', args, kwargs, 0, 0);
      return new StarList(dictEntries(d).map((e) => new StarTuple(e)));
    },
  ],
  [
    'keys',
    (_t, d, args, kwargs) => {
      positionalArgs('keys', args, kwargs, 0, 0);
      return new StarList(d.table.keys());
    },
  ],
  [
    'pop',
    (_t, d, args, kwargs) => {
      positionalArgs('pop', args, kwargs, 1, 2);
      const v = d.table.delete(args[0]!);
      if (v !== undefined) return v;
      if (args[1] !== undefined) return args[1];
      throw new StarlarkError('pop: missing key');
    },
  ],
  [
    'popitem',
    (_t, d, args, kwargs) => {
      positionalArgs('popitem', args, kwargs, 0, 0);
      const first = d.table.first();
      if (!first) throw new StarlarkError('popitem: empty dict');
      d.table.delete(first[0]);
      return new StarTuple(first);
    },
  ],
  [
    'setdefault',
    (_t, d, args, kwargs) => {
      positionalArgs('setdefault', args, kwargs, 1, 2);
      const v = d.get(args[0]!);
      if (v !== undefined) return v;
      const dflt = args[1] ?? None;
      d.set(args[0]!, dflt);
      return dflt;
    },
  ],
  [
    'update',
    (_t, d, args, kwargs) => {
      updateDict('update', d, args, kwargs);
      return None;
    },
  ],
  [
    'values',
    (_t, d, args, kwargs) => {
      positionalArgs('values', args, kwargs, 0, 0);
      return new StarList(d.table.values());
    },
  ],
]);
