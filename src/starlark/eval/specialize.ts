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
/**
 * A template's free variables: one object, or several whose names do not overlap (a call's common
 * parts, its arguments and its own values). Parts are read in place, never merged into a new object:
 * an object spread per syntax node gave V8 a new hidden class for each, allocated in the old
 * generation, which raised the peak memory of loading many BUILD files by about a tenth.
 */
export type TemplateDeps = Readonly<Record<string, unknown>> | readonly Readonly<Record<string, unknown>>[];

function partsOf(deps: TemplateDeps): readonly Readonly<Record<string, unknown>>[] {
  return Array.isArray(deps) ? deps : [deps as Readonly<Record<string, unknown>>];
}

/** The names and values of `deps`, in order. */
function unpack(deps: TemplateDeps): { names: string[]; values: unknown[] } {
  const names: string[] = [];
  const values: unknown[] = [];
  for (const part of partsOf(deps)) {
    for (const name of Object.keys(part)) {
      names.push(name);
      values.push(part[name]);
    }
  }
  return { names, values };
}

export function specialize<T>(deps: TemplateDeps, src: string): T {
  const { names, values } = unpack(deps);
  return new Function(...names, src)(...values) as T;
}

interface Factory {
  readonly names: readonly string[];
  readonly make: (...deps: unknown[]) => unknown;
}

/** Compiled templates by source; a template always comes with the same dependency names. */
const factories = new Map<string, Factory>();

export function instantiateShared<T>(deps: TemplateDeps, src: string): T {
  const { names, values } = unpack(deps);
  let factory = factories.get(src);
  if (factory === undefined) {
    factory = { names, make: new Function(...names, src) as Factory['make'] };
    factories.set(src, factory);
  } else if (factory.names.length !== names.length || factory.names.some((n, i) => n !== names[i])) {
    throw new Error(`internal error: template instantiated with dependencies ${names.join(', ')}, compiled with ${factory.names.join(', ')}`);
  }
  return factory.make(...values) as T;
}
