/**
 * Instantiates small JS functions from source templates, with `deps` as their free variables. Each
 * construct of the language is written once, as a template; the compiler instantiates it in one of
 * two ways:
 *
 * - {@link specialize}: new code for each syntax node. Closures made from one function literal share
 *   their code, so a call site inside them (the `cond(fr)` of every `if`) sees every kind of callee
 *   and V8 marks it megamorphic. Code made here is new for each node, so each call site sees one
 *   callee and V8 can inline it: the hot bodies of Starlark functions then run as straight JS.
 * - {@link instantiateShared}: code shared by every node of the same template, compiled once per
 *   process and cached, as a hand-written closure would be. For top-level code, which runs once and
 *   can be huge (generated BUILD files), where compiling per node would cost more than it saves.
 *
 * The source is built from fixed templates and slot numbers, never from user text.
 */
export function specialize<T>(deps: Readonly<Record<string, unknown>>, src: string): T {
  const names = Object.keys(deps);
  return new Function(...names, src)(...names.map((n) => deps[n])) as T;
}

interface Factory {
  readonly names: readonly string[];
  readonly make: (...deps: unknown[]) => unknown;
}

/** Compiled templates by source; a template always comes with the same dependency names. */
const factories = new Map<string, Factory>();

export function instantiateShared<T>(deps: Readonly<Record<string, unknown>>, src: string): T {
  const names = Object.keys(deps);
  let factory = factories.get(src);
  if (factory === undefined) {
    factory = { names, make: new Function(...names, src) as Factory['make'] };
    factories.set(src, factory);
  } else if (factory.names.length !== names.length || factory.names.some((n, i) => n !== names[i])) {
    throw new Error(`internal error: template instantiated with dependencies ${names.join(', ')}, compiled with ${factory.names.join(', ')}`);
  }
  const values: unknown[] = new Array(names.length);
  for (let i = 0; i < names.length; i++) values[i] = deps[names[i]!];
  return factory.make(...values) as T;
}
