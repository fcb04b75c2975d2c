import { None, StarList, StarTuple, StarlarkError, typeName, type Value } from '../starlark/index.js';

/** A `list`/`tuple` of strings parameter (None or absent: empty), with Bazel's parameter error. */
export function stringSequence(fn: string, param: string, v: Value | undefined): string[] {
  if (v === undefined || v === None) return [];
  if (!(v instanceof StarList || v instanceof StarTuple))
    throw new StarlarkError(`${fn}: for parameter ${param}: got ${typeName(v)}, want sequence of strings`);
  return v.elems.map((e) => {
    if (typeof e !== 'string') throw new StarlarkError(`${fn}: for parameter ${param}: got ${typeName(e)} in the list, want string`);
    return e;
  });
}

/** A `doc` parameter: a string or None. */
export function optionalDoc(fn: string, v: Value | undefined): string {
  if (v === undefined || v === None) return '';
  if (typeof v !== 'string') throw new StarlarkError(`${fn}: for parameter doc: got ${typeName(v)}, want string`);
  return v;
}
