import { StarlarkError } from './starlark-error.js';
import { typeName } from './values/describe.js';
import { StarList, StarTuple } from './values/list.js';
import { checkSize, MAX_ELEMENTS, tooManyElements } from './values/size-limit.js';
import { StarObject, type Value } from './values/value.js';

/** The elements of an iterable value as an array (a copy for mutable containers), or undefined. */
export function elementsOf(v: Value): readonly Value[] | undefined {
  if (v instanceof StarList) return v.elems.slice();
  if (v instanceof StarTuple) return v.elems;
  if (v instanceof StarObject) {
    const it = v.iterate();
    if (it === undefined) return undefined;
    if (Array.isArray(it)) return (it as Value[]).slice();
    // A range knows its length: list(range(10**12)) fails before it starts.
    checkSize('list', v.len());
    const out: Value[] = [];
    for (const e of it) {
      if (out.length === MAX_ELEMENTS) throw tooManyElements('list', MAX_ELEMENTS + 1);
      out.push(e);
    }
    return out;
  }
  return undefined;
}

/** Like {@link elementsOf}, failing with starlark-go's `got T, want iterable` (prefixed by `fn: `). */
export function iterableArg(fn: string, v: Value): readonly Value[] {
  const elems = elementsOf(v);
  if (elems === undefined) throw new StarlarkError(`${fn}: got ${typeName(v)}, want iterable`);
  return elems;
}
