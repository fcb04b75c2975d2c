import { parseFile } from '../syntax/index.js';
import { resolveFile } from '../resolve/index.js';
import { UNIVERSAL_NAMES, universe } from './builtins/universe.js';
import { Compiler, TOPLEVEL, type ModuleContext } from './compiler.js';
import { Cell, Frame } from './frame.js';
import type { ModuleGlobals, Thread } from './thread.js';
import type { Value } from './values/value.js';
import type * as ast from '../syntax/ast.js';

/** The universal names as a set: passing a set (not a predicate) lets the resolver suggest them. */
export const UNIVERSAL: ReadonlySet<string> = new Set(UNIVERSAL_NAMES);

/** Is `name` a universal (built-in) name of the language? For resolvers and tools. */
export function isUniversal(name: string): boolean {
  return UNIVERSAL.has(name);
}

/**
 * Parses, resolves and executes one Starlark file as a module, then freezes and returns its globals
 * (all of them, in binding order; the embedder decides which are exported). Static errors throw
 * StarlarkSyntaxError / StarlarkStaticErrors; dynamic ones throw EvalError.
 */
export function execFile(thread: Thread, filename: string, source: string, predeclared: ReadonlyMap<string, Value>): ModuleGlobals {
  const file = parseFile(source, filename);
  resolveFile(file, thread.options, predeclared, UNIVERSAL);
  return execResolvedFile(thread, file, predeclared);
}

/**
 * Executes a file that has been parsed and resolved (with the same predeclared names). `label` is
 * the embedder's name of the module, which its functions' str shows.
 */
export function execResolvedFile(thread: Thread, file: ast.File, predeclared: ReadonlyMap<string, Value>, label?: string): ModuleGlobals {
  const info = file.module!;
  const mod: ModuleContext = {
    name: file.path,
    ...(label === undefined ? {} : { label }),
    globals: new Array(info.globals.length),
    predeclared,
    universe: universe(thread.options),
  };
  const body = new Compiler(mod).block(file.stmts);
  const locals: (Value | Cell | undefined)[] = new Array(info.locals.length);
  for (const slot of info.cells) locals[slot] = new Cell();
  const top = new Frame(locals, [], thread, { name: TOPLEVEL, pos: file.pos });
  const depth = thread.depth;
  thread.frames[depth] = top;
  thread.depth = depth + 1;
  try {
    body(top);
  } finally {
    thread.depth = depth;
    thread.frames.length = depth; // finished frames' locals may be large: let them go
  }
  const out = new Map<string, Value>();
  for (const b of info.globals) {
    const v = mod.globals[b.index];
    if (v === undefined) continue;
    if (typeof v === 'object') v.freeze();
    out.set(b.name, v);
  }
  return out;
}
