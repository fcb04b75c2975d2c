import type { Position } from '../../core/index.js';
import type * as ast from '../syntax/ast.js';
import { callMethod, getAttr, methodError } from './attributes.js';
import { DICT_METHODS } from './builtins/dict-methods.js';
import { LIST_METHODS } from './builtins/list-methods.js';
import { STRING_METHODS } from './builtins/string-methods.js';
import { annotate, BREAK, type Cell, CONTINUE, evalError, NORMAL, RETURN, type Completion, type ExprCode, type Frame, type StmtCode } from './frame.js';
import { makeInvoker, MANDATORY, StarFunction, type DefaultValue, type FunctionCode } from './function.js';
import { elementsOf } from './iteration.js';
import { checkSize, MAX_ELEMENTS, tooManyElements } from './values/size-limit.js';
import { compileArith, type ArithContext } from './arith-codegen.js';
import {
  binaryOp,
  contains,
  dictEntries,
  getIndex,
  setDifference,
  setIndex,
  setIntersection,
  setSymmetricDifference,
  setUnion,
  slice,
  unaryOp,
} from './operators.js';
import { StarSet } from './values/set.js';
import { StarlarkError } from './starlark-error.js';
import { instantiateShared, specialize, type TemplateDeps } from './specialize.js';
import type { ModuleGlobals } from './thread.js';
import { StarBytes } from './values/bytes.js';
import { StarCallable, type Kwargs } from './values/callable.js';
import { repr, truth, typeName } from './values/describe.js';
import { StarDict } from './values/dict.js';
import { equals } from './values/equality.js';
import { StarFloat } from './values/float.js';
import { StarList, StarTuple } from './values/list.js';
import { StarRange } from './values/range.js';
import { None, StarObject, type Value } from './values/value.js';
import { nearestName } from '../resolve/nearest-name.js';

/** What a module's code needs at run time besides the frame: its globals and the names it sees. */
export interface ModuleContext {
  readonly name: string;
  /** The embedder's name of the module (a .bzl file's label), for its functions' str. */
  readonly label?: string;
  /** Global slots by resolver index; undefined = not yet assigned. */
  readonly globals: (Value | undefined)[];
  readonly predeclared: ReadonlyMap<string, Value>;
  readonly universe: ReadonlyMap<string, Value>;
}

type Assign = (fr: Frame, v: Value) => void;
/** A comprehension clause chain: runs the rest of the clauses (and finally the body) for each element. */
type ClauseCode = (fr: Frame, acc: StarList | StarDict) => void;

/** The function name of a module's top-level code in backtraces and call stacks. */
export const TOPLEVEL = '<toplevel>';

function isTrue(v: Value): boolean {
  return v === true || (v !== false && truth(v));
}

/** Iterates a value for a `for` loop or comprehension, locking mutable containers meanwhile. */
function forEach(x: Value, pos: Position, fnName: string, fr: Frame, each: (fr: Frame, v: Value) => Completion): Completion {
  if (x instanceof StarList) {
    const elems = x.elems;
    if (x.frozen) {
      for (let i = 0; i < elems.length; i++) {
        const c = each(fr, elems[i]!);
        if (c === BREAK) break;
        if (c === RETURN) return c;
      }
      return NORMAL;
    }
    x.itercount++;
    try {
      for (let i = 0; i < elems.length; i++) {
        const c = each(fr, elems[i]!);
        if (c === BREAK) break;
        if (c === RETURN) return c;
      }
    } finally {
      x.itercount--;
    }
    return NORMAL;
  }
  if (x instanceof StarRange) {
    for (let i = 0, v = x.start; i < x.length; i++, v += x.step) {
      const c = each(fr, v);
      if (c === BREAK) break;
      if (c === RETURN) return c;
    }
    return NORMAL;
  }
  if (x instanceof StarTuple) {
    const elems = x.elems;
    for (let i = 0; i < elems.length; i++) {
      const c = each(fr, elems[i]!);
      if (c === BREAK) break;
      if (c === RETURN) return c;
    }
    return NORMAL;
  }
  const it = x instanceof StarObject ? x.iterate() : undefined;
  if (it === undefined) throw evalError(`${typeName(x)} value is not iterable`, pos, fnName);
  const obj = x as StarObject;
  obj.lockForIteration();
  try {
    for (const v of it) {
      const c = each(fr, v);
      if (c === BREAK) break;
      if (c === RETURN) return c;
    }
  } finally {
    obj.unlockForIteration();
  }
  return NORMAL;
}

/**
 * Compiles a resolved syntax tree into JS closures, once per module: locals live in arrays indexed
 * by the resolver's slots, control flow uses completion codes, and operators inline the int and
 * string fast paths, leaving the general case to the operators module.
 */
export class Compiler {
  /** Name of the function being compiled (for backtraces). */
  private fnName = TOPLEVEL;

  constructor(private readonly mod: ModuleContext) {}

  private inFunction(): boolean {
    return this.fnName !== TOPLEVEL;
  }

  /**
   * Instantiates a construct's one template: per syntax node inside functions, shared by every node
   * of the same shape at top level (see specialize.ts).
   */
  private template<T>(deps: TemplateDeps, src: string): T {
    return this.inFunction() ? specialize<T>(deps, src) : instantiateShared<T>(deps, src);
  }

  private arithContext(): ArithContext {
    return { globals: this.mod.globals, fnName: this.fnName, compile: (x) => this.expr(x) };
  }

  // ---------------------------------------------------------------------------------------------
  // Statements
  // ---------------------------------------------------------------------------------------------

  block(stmts: readonly ast.Stmt[]): StmtCode {
    const codes = stmts.map((s) => this.stmt(s));
    switch (codes.length) {
      case 0:
        return () => NORMAL;
      case 1:
        return codes[0]!;
      case 2: {
        const [a, b] = codes as [StmtCode, StmtCode];
        return (fr) => {
          const c = a(fr);
          return c !== NORMAL ? c : b(fr);
        };
      }
      case 3: {
        const [a, b, d] = codes as [StmtCode, StmtCode, StmtCode];
        return (fr) => {
          let c = a(fr);
          if (c !== NORMAL) return c;
          c = b(fr);
          return c !== NORMAL ? c : d(fr);
        };
      }
      case 4: {
        const [a, b, d, e] = codes as [StmtCode, StmtCode, StmtCode, StmtCode];
        return (fr) => {
          let c = a(fr);
          if (c !== NORMAL) return c;
          c = b(fr);
          if (c !== NORMAL) return c;
          c = d(fr);
          return c !== NORMAL ? c : e(fr);
        };
      }
      default:
        return sequence(codes);
    }
  }

  private stmt(s: ast.Stmt): StmtCode {
    switch (s.kind) {
      case 'ExprStmt': {
        return this.template({ e: this.expr(s.expr) }, 'return function exprStmt(fr) { e(fr); return 0; };');
      }
      case 'AssignStmt':
        return this.assignStmt(s);
      case 'AugAssignStmt':
        return this.augAssign(s);
      case 'DefStmt': {
        const make = this.functionMaker(s.name.name, s.pos, s.params, s.fn!, s.body);
        const assign = this.assignTo(s.name, s.pos);
        return (fr) => {
          assign(fr, make(fr));
          return NORMAL;
        };
      }
      case 'IfStmt': {
        const cond = this.expr(s.cond);
        const then = this.block(s.then);
        const orelse = this.block(s.orelse);
        const other = s.orelse.length === 0 ? '0' : 'orelse(fr)';
        return this.template(
          { cond, then, orelse, truth },
          `return function ifStmt(fr) { const v = cond(fr); return (v === true || (v !== false && truth(v))) ? then(fr) : ${other}; };`,
        );
      }
      case 'ForStmt': {
        const iterable = this.expr(s.iterable);
        const assign = this.assignTo(s.vars, s.pos);
        const body = this.block(s.body);
        const pos = s.pos;
        const fnName = this.fnName;
        const each = (fr: Frame, v: Value): Completion => {
          assign(fr, v);
          return body(fr);
        };
        const target = unparen(s.vars);
        if (target.kind === 'Identifier' && target.binding!.scope === 'local') {
          // The common `for i in range(n)` / `for x in list` into a local: loops inline, no callbacks.
          const slot = target.binding!.index;
          return this.template(
            { iterable, body, StarRange, StarList, forEach, each, pos, fnName },
            `return function forStmt(fr) {
              const x = iterable(fr);
              const locals = fr.locals;
              if (x instanceof StarRange) {
                const n = x.length, step = x.step;
                for (let i = 0, v = x.start; i < n; i++, v += step) {
                  locals[${slot}] = v;
                  const c = body(fr);
                  if (c === 1) break;
                  if (c === 3) return c;
                }
                return 0;
              }
              if (x instanceof StarList) {
                const elems = x.elems, lock = !x.frozen;
                if (lock) x.itercount++;
                try {
                  for (let i = 0; i < elems.length; i++) {
                    locals[${slot}] = elems[i];
                    const c = body(fr);
                    if (c === 1) break;
                    if (c === 3) return c;
                  }
                } finally {
                  if (lock) x.itercount--;
                }
                return 0;
              }
              return forEach(x, pos, fnName, fr, each);
            };`,
          );
        }
        return (fr) => forEach(iterable(fr), pos, fnName, fr, each);
      }
      case 'WhileStmt': {
        const cond = this.expr(s.cond);
        const body = this.block(s.body);
        return this.template(
          { cond, body, truth },
          `return function whileStmt(fr) {
            for (;;) {
              const v = cond(fr);
              if (!(v === true || (v !== false && truth(v)))) return 0;
              const c = body(fr);
              if (c === 1) return 0;
              if (c === 3) return c;
            }
          };`,
        );
      }
      case 'ReturnStmt': {
        if (!s.result) {
          return (fr) => {
            fr.result = None;
            return RETURN;
          };
        }
        return this.template({ e: this.expr(s.result) }, 'return function returnStmt(fr) { fr.result = e(fr); return 3; };');
      }
      case 'BreakStmt':
        return () => BREAK;
      case 'ContinueStmt':
        return () => CONTINUE;
      case 'PassStmt':
        return () => NORMAL;
      case 'LoadStmt':
        return this.load(s);
    }
  }

  private load(s: ast.LoadStmt): StmtCode {
    const module = s.module.value;
    const assigns = s.to.map((id) => this.assignTo(id, id.pos));
    const fnName = this.fnName;
    return (fr) => {
      const thread = fr.thread;
      if (!thread.load) throw evalError('load not implemented by this application', s.module.pos, fnName);
      let globals: ModuleGlobals;
      try {
        globals = thread.load(thread, module);
      } catch (e) {
        // A module that failed reports its own position; a module that could not be loaded at all
        // (missing, cyclic) is reported at this load.
        if (e instanceof StarlarkError) throw evalError(`cannot load ${module}: ${e.message}`, s.module.pos, fnName);
        throw e;
      }
      for (let i = 0; i < s.from.length; i++) {
        const from = s.from[i]!;
        const v = globals.get(from.name);
        if (v === undefined) {
          const hint = nearestName(from.name, globals.keys());
          throw evalError(`load: name ${from.name} not found in module ${module}${hint ? ` (did you mean ${hint}?)` : ''}`, from.pos, fnName);
        }
        assigns[i]!(fr, v);
      }
      return NORMAL;
    };
  }

  private assignStmt(s: ast.AssignStmt): StmtCode {
    const rhs = this.expr(s.rhs);
    const lhs = unparen(s.lhs);
    if (lhs.kind === 'Identifier') {
      const b = lhs.binding!;
      if (b.scope === 'local') {
        return this.template({ rhs }, `return function assign(fr) { fr.locals[${b.index}] = rhs(fr); return 0; };`);
      }
      if (b.scope === 'global') {
        const g = this.mod.globals;
        const i = b.index;
        return (fr) => {
          g[i] = rhs(fr);
          return NORMAL;
        };
      }
    }
    if (lhs.kind === 'IndexExpr') {
      // `d[k] = v` / `l[i] = v`: the value first (as Python), then the container and the key.
      const fnName = this.fnName;
      return this.template(
        { rhs, x: this.expr(lhs.x), index: this.expr(lhs.index), StarDict, StarList, setIndex, annotate, at: lhs.lbrack, fnName },
        `return function assignIndex(fr) {
          const v = rhs(fr);
          const obj = x(fr);
          const key = index(fr);
          if (typeof key === 'string' && obj instanceof StarDict && !obj.table.frozen && obj.table.itercount === 0) {
            obj.table.map.set(key, v);
            return 0;
          }
          if (typeof key === 'number' && obj instanceof StarList && key >= 0 && key < obj.elems.length && !obj.frozen && obj.itercount === 0) {
            obj.elems[key] = v;
            return 0;
          }
          try {
            setIndex(obj, key, v);
          } catch (e) {
            throw annotate(e, at, fnName);
          }
          return 0;
        };`,
      );
    }
    const assign = this.assignTo(s.lhs, s.opPos);
    return (fr) => {
      assign(fr, rhs(fr));
      return NORMAL;
    };
  }

  /** Compiles an assignment to a target (identifier, index, field, or a tuple/list of targets). */
  private assignTo(target: ast.Expr, pos: Position): Assign {
    const fnName = this.fnName;
    const t = unparen(target);
    switch (t.kind) {
      case 'Identifier': {
        const b = t.binding!;
        const i = b.index;
        switch (b.scope) {
          case 'local':
            return (fr, v) => {
              fr.locals[i] = v;
            };
          case 'cell':
            return (fr, v) => {
              (fr.locals[i] as Cell).v = v;
            };
          case 'free':
            return (fr, v) => {
              fr.free[i]!.v = v;
            };
          case 'global': {
            const g = this.mod.globals;
            return (_fr, v) => {
              g[i] = v;
            };
          }
          default:
            throw new Error(`internal error: assignment to ${b.scope} ${t.name}`);
        }
      }
      case 'TupleExpr':
      case 'ListExpr': {
        const parts = t.elems.map((e) => this.assignTo(e, pos));
        const n = parts.length;
        return (fr, v) => {
          let elems: readonly Value[] | undefined;
          if (v instanceof StarTuple || v instanceof StarList) elems = v.elems;
          else if (typeof v === 'object') elems = elementsOf(v); // any iterable, fully iterated first
          if (elems === undefined) throw evalError(`got ${typeName(v)} in sequence assignment`, pos, fnName);
          if (elems.length !== n) {
            const which = elems.length > n ? 'many' : 'few';
            throw evalError(`too ${which} values to unpack (got ${elems.length}, want ${n})`, pos, fnName);
          }
          if (v instanceof StarList) elems = elems.slice();
          for (let k = 0; k < n; k++) parts[k]!(fr, elems[k]!);
        };
      }
      case 'IndexExpr': {
        const x = this.expr(t.x);
        const index = this.expr(t.index);
        const at = t.lbrack;
        return (fr, v) => {
          const obj = x(fr);
          const key = index(fr);
          try {
            setIndex(obj, key, v);
          } catch (e) {
            throw annotate(e, at, fnName);
          }
        };
      }
      case 'DotExpr': {
        const x = this.expr(t.x);
        const name = t.name.name;
        const at = t.dot;
        return (fr, v) => {
          const obj = x(fr);
          const setter = obj as unknown as { setField?: (n: string, v: Value) => void };
          if (obj instanceof StarObject && typeof setter.setField === 'function') {
            try {
              setter.setField(name, v);
            } catch (e) {
              throw annotate(e, at, fnName);
            }
            return;
          }
          throw evalError(`can't assign to .${name} field of ${typeName(obj)}`, at, fnName);
        };
      }
      default:
        throw new Error(`internal error: cannot assign to ${t.kind}`);
    }
  }

  private augAssign(s: ast.AugAssignStmt): StmtCode {
    const op = s.op;
    const rhs = this.expr(s.rhs);
    const at = s.opPos;
    const fnName = this.fnName;
    const apply = (x: Value, y: Value): Value => {
      if (op === '+' && x instanceof StarList) {
        // `list += iterable` extends in place.
        const elems = elementsOf(y);
        if (elems === undefined) throw evalError(`unknown binary op: list + ${typeName(y)}`, at, fnName);
        try {
          x.checkMutable('apply += to');
          checkSize('list', x.elems.length + elems.length);
        } catch (e) {
          throw annotate(e, at, fnName);
        }
        for (const e of elems) x.elems.push(e);
        return x;
      }
      const inPlace = inPlaceUpdate(op, x, y);
      if (inPlace !== undefined) {
        try {
          return inPlace();
        } catch (e) {
          throw annotate(e, at, fnName);
        }
      }
      if (op === '+' && typeof x === 'number' && typeof y === 'number') {
        const r = x + y;
        if (Number.isSafeInteger(r)) return r;
      }
      try {
        return binaryOp(op, x, y);
      } catch (e) {
        throw annotate(e, at, fnName);
      }
    };
    const lhs = unparen(s.lhs);
    switch (lhs.kind) {
      case 'Identifier': {
        const b = lhs.binding!;
        if (b.scope === 'local' || b.scope === 'global') {
          // `x op= y` on a plain variable: one generated function with the int fast path inline.
          const asBinary: ast.BinaryExpr = { kind: 'BinaryExpr', pos: s.pos, opPos: at, op, x: lhs, y: s.rhs };
          const fast = compileArith(asBinary, this.arithContext(), (a, b) => apply(a, b!));
          if (fast) {
            const i = b.index;
            if (b.scope === 'local') return this.template({ fast }, `return function augAssign(fr) { fr.locals[${i}] = fast(fr); return 0; };`);
            const g = this.mod.globals;
            return (fr) => {
              g[i] = fast(fr);
              return NORMAL;
            };
          }
        }
        const get = this.expr(lhs);
        const set = this.assignTo(lhs, at);
        return (fr) => {
          set(fr, apply(get(fr), rhs(fr)));
          return NORMAL;
        };
      }
      case 'IndexExpr': {
        const x = this.expr(lhs.x);
        const index = this.expr(lhs.index);
        const lb = lhs.lbrack;
        return (fr) => {
          const obj = x(fr);
          const key = index(fr);
          let old: Value;
          try {
            old = getIndex(obj, key);
          } catch (e) {
            throw annotate(e, lb, fnName);
          }
          const v = apply(old, rhs(fr));
          try {
            setIndex(obj, key, v);
          } catch (e) {
            throw annotate(e, lb, fnName);
          }
          return NORMAL;
        };
      }
      case 'DotExpr': {
        const x = this.expr(lhs.x);
        const name = lhs.name.name;
        const dot = lhs.dot;
        return (fr) => {
          const obj = x(fr);
          let old: Value;
          try {
            old = getAttr(obj, name);
          } catch (e) {
            throw annotate(e, dot, fnName);
          }
          const v = apply(old, rhs(fr));
          const setter = obj as unknown as { setField?: (n: string, v: Value) => void };
          if (obj instanceof StarObject && typeof setter.setField === 'function') {
            try {
              setter.setField(name, v);
            } catch (e) {
              throw annotate(e, dot, fnName);
            }
            return NORMAL;
          }
          throw evalError(`can't assign to .${name} field of ${typeName(obj)}`, dot, fnName);
        };
      }
      default:
        throw new Error(`internal error: augmented assignment to ${lhs.kind}`);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Functions
  // ---------------------------------------------------------------------------------------------

  /** Compiles a def/lambda once; the returned closure makes a function value each time it runs. */
  private functionMaker(
    name: string,
    pos: Position,
    params: readonly ast.Param[],
    info: ast.FunctionInfo,
    body: readonly ast.Stmt[] | ast.Expr,
  ): (fr: Frame) => StarFunction {
    // Defaults are evaluated in the enclosing scope, when the def runs.
    const defaultCodes: (ExprCode | null)[] = [];
    let seenOptional = false;
    let kwonly = false;
    for (const p of params) {
      if (p.mode === 'star') {
        kwonly = true;
        continue;
      }
      if (p.mode === 'starstar') continue;
      if (p.mode === 'default') seenOptional = true;
      if (seenOptional || kwonly) defaultCodes.push(p.default ? this.expr(p.default) : null);
    }
    const outer = this.fnName;
    this.fnName = name;
    let bodyCode: StmtCode;
    if (Array.isArray(body)) bodyCode = this.block(body as ast.Stmt[]);
    else {
      const e = this.expr(body as ast.Expr);
      bodyCode = (fr) => {
        fr.result = e(fr);
        return RETURN;
      };
    }
    this.fnName = outer;
    const code: FunctionCode = {
      name,
      pos,
      paramNames: info.locals.slice(0, info.numParams).map((b) => b.name),
      numKwonly: info.numKwonlyParams,
      hasVarargs: info.hasVarargs,
      hasKwargs: info.hasKwargs,
      numLocals: info.locals.length,
      cells: info.cells,
      body: bodyCode,
      moduleName: this.mod.name,
      ...(this.mod.label === undefined ? {} : { moduleLabel: this.mod.label }),
      active: 0,
      simpleParams: !info.hasVarargs && !info.hasKwargs && info.numKwonlyParams === 0,
      invoke: () => None,
    };
    code.invoke = makeInvoker(code);
    const freeVars = info.freeVars;
    return (fr) => {
      const defaults: DefaultValue[] = defaultCodes.map((d) => (d ? d(fr) : MANDATORY));
      const cells: Cell[] = freeVars.map((b) => (b.scope === 'cell' ? (fr.locals[b.index] as Cell) : fr.free[b.index]!));
      return new StarFunction(code, defaults, cells);
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Expressions
  // ---------------------------------------------------------------------------------------------

  expr(e: ast.Expr): ExprCode {
    const fnName = this.fnName;
    if (e.kind === 'BinaryExpr' || e.kind === 'UnaryExpr') {
      const fast = compileArith(e, this.arithContext());
      if (fast) return fast;
    }
    switch (e.kind) {
      case 'Identifier':
        return this.identifier(e);
      case 'IntLiteral': {
        const v = e.value;
        return () => v;
      }
      case 'FloatLiteral': {
        const v = new StarFloat(e.value);
        return () => v;
      }
      case 'StringLiteral': {
        const v = e.value;
        return () => v;
      }
      case 'BytesLiteral': {
        const v = new StarBytes(e.value);
        return () => v;
      }
      case 'ParenExpr':
        return this.expr(e.x);
      case 'ListExpr': {
        const elems = e.elems.map((x) => this.expr(x));
        return (fr) => {
          const out: Value[] = new Array(elems.length);
          for (let i = 0; i < elems.length; i++) out[i] = elems[i]!(fr);
          return new StarList(out);
        };
      }
      case 'TupleExpr': {
        const elems = e.elems.map((x) => this.expr(x));
        return (fr) => {
          const out: Value[] = new Array(elems.length);
          for (let i = 0; i < elems.length; i++) out[i] = elems[i]!(fr);
          return new StarTuple(out);
        };
      }
      case 'DictExpr': {
        const keys = e.entries.map((x) => this.expr(x.key));
        const vals = e.entries.map((x) => this.expr(x.value));
        const poss = e.entries.map((x) => x.colon);
        return (fr) => {
          const d = new StarDict();
          for (let i = 0; i < keys.length; i++) {
            const k = keys[i]!(fr);
            const v = vals[i]!(fr);
            try {
              if (d.table.has(k)) throw new StarlarkError(`duplicate key: ${repr(k)}`);
              d.table.set(k, v);
            } catch (err) {
              throw annotate(err, poss[i]!, fnName);
            }
          }
          return d;
        };
      }
      case 'UnaryExpr': {
        const x = this.expr(e.x);
        const op = e.op;
        const pos = e.pos;
        if (op === 'not') return (fr) => !isTrue(x(fr));
        if (op === '-') {
          return (fr) => {
            const v = x(fr);
            if (typeof v === 'number' && v !== 0) return -v;
            try {
              return unaryOp(op, v);
            } catch (err) {
              throw annotate(err, pos, fnName);
            }
          };
        }
        return (fr) => {
          try {
            return unaryOp(op, x(fr));
          } catch (err) {
            throw annotate(err, pos, fnName);
          }
        };
      }
      case 'BinaryExpr':
        return this.binary(e);
      case 'CondExpr': {
        const cond = this.expr(e.cond);
        const then = this.expr(e.then);
        const orelse = this.expr(e.orelse);
        return this.template(
          { cond, then, orelse, truth },
          'return function condExpr(fr) { const v = cond(fr); return (v === true || (v !== false && truth(v))) ? then(fr) : orelse(fr); };',
        );
      }
      case 'LambdaExpr': {
        const make = this.functionMaker('lambda', e.pos, e.params, e.fn!, e.body);
        return make;
      }
      case 'CallExpr':
        return this.callCode(e);
      case 'IndexExpr': {
        const x = this.expr(e.x);
        const index = this.expr(e.index);
        const pos = e.lbrack;
        return this.template(
          { x, index, StarList, StarTuple, StarDict, getIndex, annotate, pos, fnName },
          `return function indexExpr(fr) {
            const obj = x(fr);
            const i = index(fr);
            if (typeof i === 'number') {
              if ((obj instanceof StarList || obj instanceof StarTuple) && i >= 0 && i < obj.elems.length) return obj.elems[i];
            } else if (typeof i === 'string' && obj instanceof StarDict) {
              const v = obj.table.map.get(i);
              if (v !== undefined) return v;
            }
            try {
              return getIndex(obj, i);
            } catch (err) {
              throw annotate(err, pos, fnName);
            }
          };`,
        );
      }
      case 'SliceExpr': {
        const x = this.expr(e.x);
        const none: ExprCode = () => None;
        const lo = e.lo ? this.expr(e.lo) : none;
        const hi = e.hi ? this.expr(e.hi) : none;
        const step = e.step ? this.expr(e.step) : none;
        const pos = e.lbrack;
        return (fr) => {
          const obj = x(fr);
          const a = lo(fr);
          const b = hi(fr);
          const c = step(fr);
          try {
            return slice(obj, a, b, c);
          } catch (err) {
            throw annotate(err, pos, fnName);
          }
        };
      }
      case 'DotExpr': {
        const x = this.expr(e.x);
        const name = e.name.name;
        const pos = e.dot;
        return (fr) => {
          try {
            return getAttr(x(fr), name);
          } catch (err) {
            throw annotate(err, pos, fnName);
          }
        };
      }
      case 'Comprehension':
        return this.comprehension(e);
    }
  }

  private identifier(id: ast.Identifier): ExprCode {
    const b = id.binding!;
    const name = id.name;
    const pos = id.pos;
    const fnName = this.fnName;
    const i = b.index;
    switch (b.scope) {
      case 'local':
        return (fr) => {
          const v = fr.locals[i];
          if (v === undefined) throw evalError(`local variable ${name} referenced before assignment`, pos, fnName);
          return v as Value;
        };
      case 'cell':
        return (fr) => {
          const v = (fr.locals[i] as Cell).v;
          if (v === undefined) throw evalError(`local variable ${name} referenced before assignment`, pos, fnName);
          return v;
        };
      case 'free':
        return (fr) => {
          const v = fr.free[i]!.v;
          if (v === undefined) throw evalError(`local variable ${name} referenced before assignment`, pos, fnName);
          return v;
        };
      case 'global': {
        const g = this.mod.globals;
        return () => {
          const v = g[i];
          if (v === undefined) throw evalError(`global variable ${name} referenced before assignment`, pos, fnName);
          return v;
        };
      }
      case 'predeclared':
      case 'universal': {
        const v =
          (b.scope === 'predeclared' ? this.mod.predeclared : this.mod.universe).get(name) ??
          (b.scope === 'predeclared' ? this.mod.universe : this.mod.predeclared).get(name);
        if (v === undefined) {
          return () => {
            throw evalError(`internal error: predeclared variable ${name} is uninitialized`, pos, fnName);
          };
        }
        return () => v;
      }
      default:
        return () => {
          throw evalError(`undefined: ${name}`, pos, fnName);
        };
    }
  }

  private binary(e: ast.BinaryExpr): ExprCode {
    const x = this.expr(e.x);
    const y = this.expr(e.y);
    const op = e.op;
    const pos = e.opPos;
    const fnName = this.fnName;
    const slow = (a: Value, b: Value): Value => {
      try {
        return binaryOp(op, a, b);
      } catch (err) {
        throw annotate(err, pos, fnName);
      }
    };
    switch (op) {
      case 'and':
        return this.template({ x, y, truth }, 'return function and(fr) { const a = x(fr); return (a === true || (a !== false && truth(a))) ? y(fr) : a; };');
      case 'or':
        return this.template({ x, y, truth }, 'return function or(fr) { const a = x(fr); return (a === true || (a !== false && truth(a))) ? a : y(fr); };');
      case '+':
        return (fr) => {
          const a = x(fr);
          const b = y(fr);
          if (typeof a === 'number' && typeof b === 'number') {
            const r = a + b;
            if (Number.isSafeInteger(r)) return r;
          } else if (typeof a === 'string' && typeof b === 'string') return a + b;
          return slow(a, b);
        };
      case '-':
        return (fr) => {
          const a = x(fr);
          const b = y(fr);
          if (typeof a === 'number' && typeof b === 'number') {
            const r = a - b;
            if (Number.isSafeInteger(r)) return r;
          }
          return slow(a, b);
        };
      case '*':
        return (fr) => {
          const a = x(fr);
          const b = y(fr);
          if (typeof a === 'number' && typeof b === 'number') {
            const r = a * b;
            if (Number.isSafeInteger(r) && r !== 0) return r;
          }
          return slow(a, b);
        };
      case '%':
        return (fr) => {
          const a = x(fr);
          const b = y(fr);
          if (typeof a === 'number' && typeof b === 'number' && a >= 0 && b > 0) return a % b;
          return slow(a, b);
        };
      case '//':
        return (fr) => {
          const a = x(fr);
          const b = y(fr);
          if (typeof a === 'number' && typeof b === 'number' && a >= 0 && b > 0) return (a - (a % b)) / b;
          return slow(a, b);
        };
      case '==':
        return (fr) => {
          const a = x(fr);
          const b = y(fr);
          if (a === b && typeof a !== 'object') return true;
          if (typeof a === 'string' || typeof b === 'string') return false;
          return eq(a, b, pos, fnName);
        };
      case '!=':
        return (fr) => {
          const a = x(fr);
          const b = y(fr);
          if (a === b && typeof a !== 'object') return false;
          if (typeof a === 'string' || typeof b === 'string') return true;
          return !eq(a, b, pos, fnName);
        };
      case '<':
        return (fr) => {
          const a = x(fr);
          const b = y(fr);
          if (typeof a === 'number' && typeof b === 'number') return a < b;
          return slow(a, b);
        };
      case '<=':
        return (fr) => {
          const a = x(fr);
          const b = y(fr);
          if (typeof a === 'number' && typeof b === 'number') return a <= b;
          return slow(a, b);
        };
      case '>':
        return (fr) => {
          const a = x(fr);
          const b = y(fr);
          if (typeof a === 'number' && typeof b === 'number') return a > b;
          return slow(a, b);
        };
      case '>=':
        return (fr) => {
          const a = x(fr);
          const b = y(fr);
          if (typeof a === 'number' && typeof b === 'number') return a >= b;
          return slow(a, b);
        };
      case 'in':
      case 'not in': {
        const negate = op === 'not in';
        return (fr) => {
          const a = x(fr);
          const b = y(fr);
          let r: boolean;
          if (b instanceof StarDict && typeof a === 'string') r = b.table.map.has(a);
          else {
            try {
              r = contains(b, a);
            } catch (err) {
              throw annotate(err, pos, fnName);
            }
          }
          return negate ? !r : r;
        };
      }
      default:
        return (fr) => slow(x(fr), y(fr));
    }
  }

  /**
   * Calls, in three templates (a function, a method, the `append` fast path) that set `args` and
   * `kwargs` either inline (positional arguments only) or through the general evaluator. Every call
   * site records its syntax on its frame just before calling (the thread's call stack).
   */
  private callCode(e: ast.CallExpr): ExprCode {
    const common = { site: e, pos: e.lparen, fnName: this.fnName, annotate, StarlarkError };
    const args: Record<string, unknown> = {};
    let argsCode: string;
    if (e.args.every((a) => a.mode === 'positional')) {
      e.args.forEach((a, i) => (args[`a${i}`] = this.expr(a.value)));
      argsCode = `const args = [${e.args.map((_, i) => `a${i}(fr)`).join(', ')}], kwargs = null;`;
    } else {
      args['general'] = this.generalArgs(e.args, e.lparen);
      argsCode = 'const a = general(fr), args = a.args, kwargs = a.kwargs;';
    }
    const callee = unparen(e.fn);
    if (callee.kind === 'DotExpr') {
      const recv = this.expr(callee.x);
      const name = callee.name.name;
      if (name === 'append' && e.args.length === 1 && e.args[0]!.mode === 'positional') {
        return this.template(
          [common, args, { recv, name, StarList, None, callMethod, MAX_ELEMENTS }],
          `return function append(fr) {
            const r = recv(fr);
            const v = a0(fr);
            if (r instanceof StarList && !r.frozen && r.itercount === 0 && r.elems.length < MAX_ELEMENTS) {
              r.elems.push(v);
              return None;
            }
            fr.call = site;
            try {
              return callMethod(fr.thread, r, name, [v], null);
            } catch (err) {
              throw annotate(err, pos, fnName);
            }
          };`,
        );
      }
      // The built-in types' methods are looked up once per call site.
      const methods = { strMethod: STRING_METHODS.get(name), listMethod: LIST_METHODS.get(name), dictMethod: DICT_METHODS.get(name) };
      return this.template(
        [common, args, methods, { recv, name, dotPos: callee.dot, StarList, StarDict, callMethod, methodError }],
        `return function methodCall(fr) {
          const r = recv(fr);
          ${argsCode}
          const m = typeof r === 'string' ? strMethod : r instanceof StarList ? listMethod : r instanceof StarDict ? dictMethod : undefined;
          fr.call = site;
          try {
            if (m !== undefined) return m(fr.thread, r, args, kwargs);
            return callMethod(fr.thread, r, name, args, kwargs);
          } catch (err) {
            // A missing method is reported at the dot, as for any attribute.
            if (err instanceof StarlarkError && err.message.includes(' has no .' + name + ' field')) throw annotate(err, dotPos, fnName);
            throw annotate(m !== undefined ? methodError(err, name) : err, pos, fnName);
          }
        };`,
      );
    }
    return this.template(
      [common, args, { fn: this.expr(e.fn), StarCallable, StarFunction, typeName }],
      `return function call(fr) {
        const f = fn(fr);
        ${argsCode}
        fr.call = site;
        try {
          if (f instanceof StarFunction) return f.code.invoke(f, fr.thread, args, kwargs);
          if (f instanceof StarCallable) return f.call(fr.thread, args, kwargs);
          throw new StarlarkError('invalid call of non-function (' + typeName(f) + ')');
        } catch (err) {
          throw annotate(err, pos, fnName);
        }
      };`,
    );
  }

  /** Arguments with keywords, `*args` or `**kwargs`, evaluated left to right. */
  private generalArgs(args: readonly ast.Argument[], pos: Position): (fr: Frame) => { args: Value[]; kwargs: Kwargs | null } {
    const fnName = this.fnName;
    const parts = args.map((a) => ({ mode: a.mode, name: a.name?.name ?? '', value: this.expr(a.value) }));
    return (fr) => {
      const positional: Value[] = [];
      let kwargs: Kwargs | null = null;
      for (const p of parts) {
        const v = p.value(fr);
        switch (p.mode) {
          case 'positional':
            positional.push(v);
            break;
          case 'keyword':
            (kwargs ??= []).push([p.name, v]);
            break;
          case 'star': {
            const elems = elementsOf(v);
            if (elems === undefined) throw evalError(`argument after * must be iterable, not ${typeName(v)}`, pos, fnName);
            for (const x of elems) positional.push(x);
            break;
          }
          case 'starstar': {
            if (!(v instanceof StarDict)) throw evalError(`argument after ** must be a mapping, not ${typeName(v)}`, pos, fnName);
            for (const [k, val] of v.table.map) {
              const key = v.table.original(k);
              if (typeof key !== 'string') throw evalError(`keywords must be strings, not ${typeName(key)}`, pos, fnName);
              (kwargs ??= []).push([key, val]);
            }
            break;
          }
        }
      }
      return { args: positional, kwargs };
    };
  }

  private comprehension(e: ast.Comprehension): ExprCode {
    const fnName = this.fnName;
    let emit: ClauseCode;
    if (e.curly) {
      const entry = e.body as ast.DictEntry;
      const k = this.expr(entry.key);
      const v = this.expr(entry.value);
      const pos = entry.colon;
      emit = (fr, acc) => {
        const key = k(fr);
        const val = v(fr);
        try {
          (acc as StarDict).table.set(key, val);
        } catch (err) {
          throw annotate(err, pos, fnName);
        }
      };
    } else {
      const body = this.expr(e.body as ast.Expr);
      const pos = e.pos;
      const full = (acc: StarList) => annotate(tooManyElements('list', acc.elems.length + 1), pos, fnName);
      emit = this.template(
        { body, full, MAX_ELEMENTS },
        'return function emit(fr, acc) { const v = body(fr); if (acc.elems.length === MAX_ELEMENTS) throw full(acc); acc.elems.push(v); };',
      );
    }
    for (let i = e.clauses.length - 1; i >= 0; i--) {
      const clause = e.clauses[i]!;
      const next = emit;
      if (clause.kind === 'IfClause') {
        const cond = this.expr(clause.cond);
        emit = this.template(
          { cond, next, truth },
          'return function ifClause(fr, acc) { const v = cond(fr); if (v === true || (v !== false && truth(v))) next(fr, acc); };',
        );
      } else {
        const iterable = this.expr(clause.iterable);
        const assign = this.assignTo(clause.vars, clause.pos);
        const pos = clause.pos;
        const target = unparen(clause.vars);
        const slot = target.kind === 'Identifier' && target.binding!.scope === 'local' ? target.binding!.index : -1;
        const store = slot >= 0 ? `fr.locals[${slot}] = elems[i];` : 'assign(fr, elems[i]);';
        emit = this.template(
          { iterable, assign, next, pos, fnName, forEach, StarRange, StarList, StarTuple },
          `return function forClause(fr, acc) {
            const x = iterable(fr);
            if (${slot >= 0} && x instanceof StarRange) {
              const locals = fr.locals, n = x.length, step = x.step;
              for (let i = 0, v = x.start; i < n; i++, v += step) {
                locals[${Math.max(slot, 0)}] = v;
                next(fr, acc);
              }
              return;
            }
            if (x instanceof StarList || x instanceof StarTuple) {
              const elems = x.elems, lock = x instanceof StarList && !x.frozen;
              if (lock) x.itercount++;
              try {
                for (let i = 0; i < elems.length; i++) {
                  ${store}
                  next(fr, acc);
                }
              } finally {
                if (lock) x.itercount--;
              }
              return;
            }
            forEach(x, pos, fnName, fr, (f, v) => {
              assign(f, v);
              next(f, acc);
              return 0;
            });
          };`,
        );
      }
    }
    const run = emit;
    if (e.curly) {
      return (fr) => {
        const d = new StarDict();
        run(fr, d);
        return d;
      };
    }
    return (fr) => {
      const l = new StarList([]);
      run(fr, l);
      return l;
    };
  }
}

/**
 * `d |= e` on dicts and `s |= t`, `&=`, `-=`, `^=` on sets update the left operand in place (as
 * Python); returns undefined when the operands are not such a pair.
 */
function inPlaceUpdate(op: string, x: Value, y: Value): (() => Value) | undefined {
  if (x instanceof StarDict && y instanceof StarDict && op === '|') {
    return () => {
      for (const [k, v] of dictEntries(y)) x.set(k, v);
      return x;
    };
  }
  if (!(x instanceof StarSet) || !(y instanceof StarSet)) return undefined;
  const result = op === '|' ? setUnion : op === '&' ? setIntersection : op === '-' ? setDifference : op === '^' ? setSymmetricDifference : undefined;
  if (!result) return undefined;
  return () => {
    const r = result(x, y);
    x.table.checkMutable('insert into');
    x.table.clear();
    for (const e of r.elements()) x.add(e);
    return x;
  };
}

/**
 * Runs statements in order, stopping at the first non-normal completion. Longer blocks (loop and
 * function bodies) get a generated function of their own so each statement's call site is
 * monomorphic and V8 can inline the statements into it; very long blocks (top-level code of large
 * generated files) use a plain loop, as they run once.
 */
function sequence(codes: readonly StmtCode[]): StmtCode {
  if (codes.length > 64) {
    return (fr) => {
      for (let i = 0; i < codes.length; i++) {
        const c = codes[i]!(fr);
        if (c !== NORMAL) return c;
      }
      return NORMAL;
    };
  }
  let src = 'return function block(fr) { let c;';
  for (let i = 0; i < codes.length - 1; i++) src += ` if ((c = s${i}(fr)) !== 0) return c;`;
  src += ` return s${codes.length - 1}(fr); };`;
  const params = codes.map((_, i) => `s${i}`);
  return new Function(...params, src)(...codes) as StmtCode;
}

function eq(a: Value, b: Value, pos: Position, fnName: string): boolean {
  try {
    return equals(a, b);
  } catch (err) {
    throw annotate(err, pos, fnName);
  }
}

function unparen(e: ast.Expr): ast.Expr {
  while (e.kind === 'ParenExpr') e = e.x;
  return e;
}
