import type { Position } from '../../core/index.js';
import { nearestName } from '../resolve/nearest-name.js';
import { Cell, Frame, type StmtCode } from './frame.js';
import { specialize } from './specialize.js';
import { EvalError, StarlarkError } from './starlark-error.js';
import { MAX_CALL_DEPTH, type Thread } from './thread.js';
import { StarCallable, type Kwargs } from './values/callable.js';
import { repr } from './values/describe.js';
import { StarDict } from './values/dict.js';
import { EMPTY_TUPLE, StarTuple } from './values/list.js';
import { None, type Value } from './values/value.js';

/** The compiled, closure-independent part of a def or lambda (starlark-go's Funcode). */
export interface FunctionCode {
  readonly name: string;
  readonly pos: Position;
  /** Names of the ordinary parameters (kw-only included), in slot order. */
  readonly paramNames: readonly string[];
  readonly numKwonly: number;
  readonly hasVarargs: boolean;
  readonly hasKwargs: boolean;
  readonly numLocals: number;
  /** Slots holding cells (captured by nested functions). */
  readonly cells: readonly number[];
  readonly body: StmtCode;
  /** Module the function belongs to (for its str and for `globals`). */
  readonly moduleName: string;
  /** The embedder's name of that module (Bazel: its label), which the function's str names. */
  readonly moduleLabel?: string;
  /** How many activations are running now: the recursion check. */
  active: number;
  /** No *args, **kwargs or keyword-only parameters (so positional calls bind trivially). */
  readonly simpleParams: boolean;
  /**
   * Runs one call of a function with this code. Generated per def (see makeInvoker) so that the call
   * of `body` inside is monomorphic; call sites call it directly for the same reason.
   */
  invoke: (fn: StarFunction, thread: Thread, args: Value[], kwargs: Kwargs | null) => Value;
}

/**
 * Builds the per-def call routine: the recursion and depth checks, argument binding (positional
 * calls of plain defs adopt the fresh argument array as locals), cells, and the body.
 */
export function makeInvoker(code: FunctionCode): FunctionCode['invoke'] {
  const nparams = code.paramNames.length;
  const cellCode = code.cells.map((s) => `{ const c = new Cell(); c.v = locals[${s}]; locals[${s}] = c; }`).join(' ');
  return specialize(
    { code, body: code.body, StarlarkError, EvalError, Cell, Frame, None, bindArgs, MAX: MAX_CALL_DEPTH },
    `return function invoke(fn, thread, args, kwargs) {
      if (code.active > 0 && !thread.options.recursion) throw new StarlarkError('function ' + code.name + ' called recursively');
      const depth = thread.depth;
      if (depth >= MAX) throw new StarlarkError('Starlark stack overflow');
      let locals;
      const ndefaults = fn.defaults.length;
      if (kwargs === null && ${code.simpleParams} && args.length <= ${nparams} && args.length >= ${nparams} - ndefaults) {
        locals = args;
        for (let i = args.length; i < ${nparams}; i++) locals.push(fn.defaults[i - ${nparams} + ndefaults]);
        for (let i = ${nparams}; i < ${code.numLocals}; i++) locals.push(undefined);
      } else {
        locals = new Array(${code.numLocals});
        bindArgs(fn, locals, args, kwargs);
      }
      ${cellCode}
      const fr = new Frame(locals, fn.freeCells, thread, code);
      code.active++;
      thread.frames[depth] = fr;
      thread.depth = depth + 1;
      try {
        return body(fr) === 3 ? fr.result : None;
      } catch (e) {
        if (e instanceof EvalError) e.needsCallerFrame = true;
        throw e;
      } finally {
        code.active--;
        thread.depth = depth;
      }
    };`,
  );
}

/** Marks a parameter without default in the defaults array (starlark-go's `mandatory`). */
export const MANDATORY: unique symbol = Symbol('mandatory');
export type DefaultValue = Value | typeof MANDATORY;

/** A Starlark function value: code + default values + captured cells. */
export class StarFunction extends StarCallable {
  constructor(
    readonly code: FunctionCode,
    /** Defaults of the parameters from the first optional one on (MANDATORY for required kw-only). */
    readonly defaults: DefaultValue[],
    readonly freeCells: readonly Cell[],
  ) {
    super();
  }
  get name(): string {
    return this.code.name;
  }
  get type(): string {
    return 'function';
  }
  private frozen = false;
  override markFrozen(pending: Value[]): void {
    if (this.frozen) return; // a closure may capture itself
    this.frozen = true;
    for (const d of this.defaults) if (d !== MANDATORY) pending.push(d);
    for (const c of this.freeCells) if (c.v !== undefined) pending.push(c.v);
  }
  repr(): string {
    // Bazel's StarlarkFunction: `<function f from //pkg:defs.bzl>` where the module has a label.
    return this.code.moduleLabel === undefined ? `<function ${this.code.name}>` : `<function ${this.code.name} from ${this.code.moduleLabel}>`;
  }

  call(thread: Thread, args: Value[], kwargs: Kwargs | null): Value {
    return this.code.invoke(this, thread, args, kwargs);
  }
}

/** Binds arguments to parameter slots with starlark-go's rules and messages (its setArgs). */
function bindArgs(fn: StarFunction, locals: (Value | Cell | undefined)[], args: Value[], kwargs: Kwargs | null): void {
  const code = fn.code;
  const name = code.name;
  const nparams = code.paramNames.length;
  if (nparams === 0 && !code.hasVarargs && !code.hasKwargs) {
    const n = args.length + (kwargs?.length ?? 0);
    if (n > 0) throw new StarlarkError(`function ${name} accepts no arguments (${n} given)`);
    return;
  }
  let kwdict: StarDict | undefined;
  if (code.hasKwargs) {
    kwdict = new StarDict();
    locals[nparams + (code.hasVarargs ? 1 : 0)] = kwdict;
  }
  const nonkwonly = nparams - code.numKwonly;
  let n = args.length;
  if (n > nonkwonly) {
    if (!code.hasVarargs) {
      const atMost = fn.defaults.length > code.numKwonly ? 'at most ' : '';
      throw new StarlarkError(`function ${name} accepts ${atMost}${nonkwonly} positional argument${nonkwonly === 1 ? '' : 's'} (${args.length} given)`);
    }
    n = nonkwonly;
  }
  for (let i = 0; i < n; i++) locals[i] = args[i];
  if (code.hasVarargs) locals[nparams] = args.length > n ? new StarTuple(args.slice(n)) : EMPTY_TUPLE;
  if (kwargs) {
    for (const [k, v] of kwargs) {
      const i = code.paramNames.indexOf(k);
      if (i >= 0) {
        if (locals[i] !== undefined) throw new StarlarkError(`function ${name} got multiple values for parameter ${repr(k)}`);
        locals[i] = v;
        continue;
      }
      if (!kwdict) {
        const hint = nearestName(k, code.paramNames);
        throw new StarlarkError(`function ${name} got an unexpected keyword argument ${repr(k)}${hint ? ` (did you mean ${hint}?)` : ''}`);
      }
      if (kwdict.get(k) !== undefined) throw new StarlarkError(`function ${name} got multiple values for parameter ${repr(k)}`);
      kwdict.set(k, v);
    }
  }
  if (n < nparams || code.numKwonly > 0) {
    const m = nparams - fn.defaults.length; // first parameter with a default
    let missing: string[] | undefined;
    let i = n;
    for (; i < m; i++) if (locals[i] === undefined) (missing ??= []).push(code.paramNames[i]!);
    for (; i < nparams; i++) {
      if (locals[i] === undefined) {
        const d = fn.defaults[i - m]!;
        if (d === MANDATORY) (missing ??= []).push(code.paramNames[i]!);
        else locals[i] = d;
      }
    }
    if (missing !== undefined) {
      throw new StarlarkError(`function ${name} missing ${missing.length} argument${missing.length > 1 ? 's' : ''} (${missing.join(', ')})`);
    }
  }
}
