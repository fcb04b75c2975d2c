import type { Position } from '../../core/index.js';
import type { DialectOptions } from '../resolve/index.js';
import { StarlarkError } from './starlark-error.js';
import { StarCallable, type Kwargs } from './values/callable.js';
import { typeName } from './values/describe.js';
import type { Value } from './values/value.js';

/** The loaded module's exported names (frozen). */
export type ModuleGlobals = ReadonlyMap<string, Value>;

export interface ThreadHooks {
  /** Called by `load(module, ...)`; returns the module's exported globals. Errors are reported at the load. */
  readonly load?: (thread: Thread, module: string) => ModuleGlobals;
  /** Called by `print`; the default writes nothing. */
  readonly print?: (thread: Thread, msg: string) => void;
}

/** The deepest Starlark call chain allowed before a clean "stack overflow" error. */
export const MAX_CALL_DEPTH = 3000;

/**
 * The state of one Starlark computation, as in starlark-go: a name, the embedder's hooks and
 * dialect options, and the call depth. One thread runs one module at a time.
 */
export class Thread {
  readonly name: string;
  readonly options: DialectOptions;
  readonly load: ThreadHooks['load'];
  readonly printHook: ThreadHooks['print'];
  /** Current Starlark call depth. */
  depth = 0;
  /** Where the `print` call that is running is (set just before it runs), for the print hook. */
  printPosition: Position | undefined;
  /** Embedder-owned data (e.g. the loading phase's package context). */
  readonly locals = new Map<string, unknown>();

  constructor(name: string, hooks: ThreadHooks = {}, options: DialectOptions = {}) {
    this.name = name;
    this.load = hooks.load;
    this.printHook = hooks.print;
    this.options = options;
  }

  print(msg: string): void {
    this.printHook?.(this, msg);
  }

  /** Calls any callable value; fails like starlark-go for a non-callable one. */
  call(fn: Value, args: Value[], kwargs: Kwargs | null = null): Value {
    if (!(fn instanceof StarCallable)) throw new StarlarkError(`invalid call of non-function (${typeName(fn)})`);
    return fn.call(this, args, kwargs);
  }
}
