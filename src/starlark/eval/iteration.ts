import { StarlarkError } from './starlark-error.js';
import { typeName } from './values/describe.js';
import { StarList, StarTuple } from './values/list.js';
import { StarObject, type Value } from './values/value.js';

/** The elements of an iterable value as an array (a copy for mutable containers), or undefined. */
export function elementsOf(v: Value): readonly Value[] | undefined {
  if (v instanceof StarList) return v.elems.slice();
  if (v instanceof StarTuple) return v.elems;
  if (v instanceof StarObject) {
    const it = v.iterate();
    if (it === undefined) return undefined;
    return Array.isArray(it) ? (it as Value[]).slice() : [...it];
  }
  return undefined;
}

/** Like {@link elementsOf}, failing with starlark-go's `got T, want iterable` (prefixed by `fn: `). */
export function iterableArg(fn: string, v: Value): readonly Value[] {
  const elems = elementsOf(v);
  if (elems === undefined) throw new StarlarkError(`${fn}: got ${typeName(v)}, want iterable`);
  return elems;
}
