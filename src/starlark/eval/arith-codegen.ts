import type * as ast from '../syntax/ast.js';
import { annotate, evalError, type ExprCode } from './frame.js';
import { binaryOp, unaryOp } from './operators.js';
import { StarFloat } from './values/float.js';
import type { Value } from './values/value.js';

/**
 * Compiles arithmetic and comparison expressions over locals, globals and int constants (the hot
 * inner expressions of loops, like `(acc * 31 + i) % m` or `n % 2 == 0`) into one JS function each,
 * so that V8 optimises the whole tree with the int fast paths inline. Anything the fast paths do not
 * cover goes to a per-node slow path with the node's position. Other expressions return undefined
 * and are compiled to closures as usual.
 */

type Slow = (a: Value, b?: Value) => Value;
type Factory = (S: Slow[], U: (() => never)[], G: (Value | undefined)[], C: ExprCode[], F: typeof StarFloat, N: (v: Value) => number, K: Value[]) => ExprCode;

/** The numeric value of an int or float (NaN for anything else, which fails the fast path). */
function numericValue(v: Value): number {
  return typeof v === 'number' ? v : v instanceof StarFloat ? v.value : NaN;
}

const OPS = new Set(['+', '-', '*', '/', '%', '//', '<', '<=', '>', '>=', '==', '!=', '&', '|', '^', '<<', '>>']);

/** Factories by generated source: identical shapes share one compiled JS function. */
const factories = new Map<string, Factory>();

export interface ArithContext {
  readonly globals: (Value | undefined)[];
  readonly fnName: string;
  /** Compiles any other subexpression to a closure, which the generated code calls. */
  readonly compile: (e: ast.Expr) => ExprCode;
}

function unparen(e: ast.Expr): ast.Expr {
  while (e.kind === 'ParenExpr') e = e.x;
  return e;
}

/** The root must be an arithmetic or comparison operator; its operands may be anything. */
function eligible(e: ast.Expr): boolean {
  e = unparen(e);
  return (e.kind === 'BinaryExpr' && OPS.has(e.op)) || (e.kind === 'UnaryExpr' && e.op === '-');
}

/** Nodes the generated code handles itself; everything else becomes a closure call. */
function isInline(e: ast.Expr): boolean {
  switch (e.kind) {
    case 'Identifier':
      return e.binding !== null && (e.binding.scope === 'local' || e.binding.scope === 'global');
    case 'IntLiteral':
      return typeof e.value === 'number';
    case 'FloatLiteral':
      return true;
    case 'BinaryExpr':
    case 'UnaryExpr':
      return eligible(e);
    default:
      return false;
  }
}

/**
 * The float fast path: when one operand is a float and the other a float or small int (x and y
 * receive their numeric values; NaN is left to the slow path, which knows Starlark's total order).
 */
function floatPath(a: string, b: string, expr: (x: string, y: string) => string, slow: string, extra = ''): string {
  return `((${a} instanceof F || ${b} instanceof F) && (x = N(${a})) === x && (y = N(${b})) === y${extra}) ? ${expr('x', 'y')} : ${slow}(${a}, ${b})`;
}

/** `x op y` with operands already in variables a and b; r is a scratch variable. */
function fastBinary(op: string, a: string, b: string, r: string, slow: string): string {
  const nums = `typeof ${a} === 'number' && typeof ${b} === 'number'`;
  switch (op) {
    case '+':
      return `(${nums} && Number.isSafeInteger(${r} = ${a} + ${b})) ? ${r} : (typeof ${a} === 'string' && typeof ${b} === 'string') ? ${a} + ${b} : ${floatPath(a, b, (x, y) => `new F(${x} + ${y})`, slow)}`;
    case '-':
      return `(${nums} && Number.isSafeInteger(${r} = ${a} - ${b})) ? ${r} : ${floatPath(a, b, (x, y) => `new F(${x} - ${y})`, slow)}`;
    case '*':
      return `(${nums} && Number.isSafeInteger(${r} = ${a} * ${b}) && ${r} !== 0) ? ${r} : ${floatPath(a, b, (x, y) => `new F(${x} * ${y})`, slow)}`;
    case '/':
      return `(${nums} && ${b} !== 0) ? new F(${a} / ${b}) : ${floatPath(a, b, (x, y) => `new F(${x} / ${y})`, slow, ' && y !== 0')}`;
    case '%':
      return `(${nums} && ${a} >= 0 && ${b} > 0) ? ${a} % ${b} : ${slow}(${a}, ${b})`;
    case '//':
      return `(${nums} && ${a} >= 0 && ${b} > 0) ? (${a} - ${a} % ${b}) / ${b} : ${slow}(${a}, ${b})`;
    case '<':
    case '<=':
    case '>':
    case '>=':
      return `(${nums}) ? ${a} ${op} ${b} : ${floatPath(a, b, (x, y) => `${x} ${op} ${y}`, slow)}`;
    case '==':
      return `(${a} === ${b} && typeof ${a} !== 'object') ? true : ((${nums}) || (typeof ${a} === 'string' && typeof ${b} === 'string')) ? false : ${slow}(${a}, ${b})`;
    case '!=':
      return `(${a} === ${b} && typeof ${a} !== 'object') ? false : ((${nums}) || (typeof ${a} === 'string' && typeof ${b} === 'string')) ? true : ${slow}(${a}, ${b})`;
    case '&':
    case '|':
    case '^':
      return `(${nums} && (${a} | 0) === ${a} && (${b} | 0) === ${b}) ? (${a} ${op} ${b}) : ${slow}(${a}, ${b})`;
    case '<<':
      return `(${nums} && (${a} | 0) === ${a} && ${b} >= 0 && ${b} < 31 && Number.isSafeInteger(${r} = ${a} * (1 << ${b}))) ? ${r} : ${slow}(${a}, ${b})`;
    case '>>':
      return `(${nums} && (${a} | 0) === ${a} && ${b} >= 0 && ${b} < 32) ? (${a} >> ${b}) : ${slow}(${a}, ${b})`;
  }
  throw new Error(`internal error: no fast path for ${op}`);
}

/**
 * Compiles `e` if it is an eligible tree with at least one operator. `rootSlow`, when given,
 * replaces the slow path of the root operator (augmented assignment uses it for `list += x`).
 */
export function compileArith(e: ast.Expr, ctx: ArithContext, rootSlow?: Slow): ExprCode | undefined {
  if (!eligible(e)) return undefined;
  const C: ExprCode[] = [];
  const K: Value[] = [];
  const S: Slow[] = [];
  const U: (() => never)[] = [];
  const temps: string[] = [];
  const fnName = ctx.fnName;

  const gen = (node: ast.Expr, root: boolean): string => {
    node = unparen(node);
    if (!root && !isInline(node)) {
      C.push(ctx.compile(node));
      return `C[${C.length - 1}](fr)`;
    }
    switch (node.kind) {
      case 'Identifier': {
        const b = node.binding!;
        const name = node.name;
        const pos = node.pos;
        const k = U.length;
        const scope = b.scope === 'local' ? 'local' : 'global';
        U.push(() => {
          throw evalError(`${scope} variable ${name} referenced before assignment`, pos, fnName);
        });
        const slot = b.scope === 'local' ? `L[${b.index}]` : `G[${b.index}]`;
        return `((t = ${slot}) === undefined ? U[${k}]() : t)`;
      }
      case 'IntLiteral':
        return `(${node.value as number})`;
      case 'FloatLiteral':
        K.push(new StarFloat(node.value));
        return `K[${K.length - 1}]`;
      case 'UnaryExpr': {
        const n = temps.length;
        temps.push(`a${n}`);
        const k = S.length;
        const pos = node.pos;
        S.push((a: Value) => {
          try {
            return unaryOp('-', a);
          } catch (err) {
            throw annotate(err, pos, fnName);
          }
        });
        return `((typeof (a${n} = ${gen(node.x, false)}) === 'number' && a${n} !== 0) ? -a${n} : S[${k}](a${n}))`;
      }
      case 'BinaryExpr': {
        const n = temps.length;
        temps.push(`a${n}`, `b${n}`, `r${n}`);
        const k = S.length;
        const op = node.op;
        const pos = node.opPos;
        if (root && rootSlow) S.push(rootSlow);
        else {
          S.push((a: Value, b?: Value) => {
            try {
              return binaryOp(op, a, b!);
            } catch (err) {
              throw annotate(err, pos, fnName);
            }
          });
        }
        return `(a${n} = ${gen(node.x, false)}, b${n} = ${gen(node.y, false)}, ${fastBinary(op, `a${n}`, `b${n}`, `r${n}`, `S[${k}]`)})`;
      }
      default:
        throw new Error(`internal error: ${node.kind} is not arithmetic`);
    }
  };

  const body = gen(e, true);
  const src = `return function arith(fr) { const L = fr.locals; let t, x, y${temps.map((v) => `, ${v}`).join('')}; return ${body}; };`;
  let factory = factories.get(src);
  if (!factory) {
    factory = new Function('S', 'U', 'G', 'C', 'F', 'N', 'K', src) as Factory;
    factories.set(src, factory);
  }
  return factory(S, U, ctx.globals, C, StarFloat, numericValue, K);
}
