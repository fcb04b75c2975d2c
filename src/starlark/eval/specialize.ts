/**
 * Instantiates a small JS function from source, with `deps` as its free variables.
 *
 * Why: closures made from one function literal share their code, so a call site inside them (the
 * `cond(fr)` of every `if`) sees every kind of callee and V8 marks it megamorphic. Code made here is
 * new for each syntax node, so each call site sees one callee and V8 can inline it: the hot bodies
 * of Starlark functions then run as straight JS. Callers only use it inside functions (top-level
 * code runs once and can be large, where compiling per node would cost more than it saves).
 * The source is built from fixed templates and slot numbers, never from user text.
 */
export function specialize<T>(deps: Readonly<Record<string, unknown>>, src: string): T {
  const names = Object.keys(deps);
  return new Function(...names, src)(...names.map((n) => deps[n])) as T;
}
