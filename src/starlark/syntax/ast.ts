/**
 * The Starlark syntax tree.
 *
 * Every node is a plain object with a `kind` discriminant and `pos`, the Position of its first token
 * (for a binary expression: of its left operand; the operator's own position is `opPos`).
 * Nodes that can fail at run time also carry the position where starlark-go reports that failure
 * (`CallExpr.lparen`, `IndexExpr.lbrack`, `DotExpr.dot`, `BinaryExpr.opPos`, ...).
 *
 * The parser builds the tree; the resolver (../resolve/) then annotates it in place:
 * - every `Identifier.binding` (null until resolved) says where the variable lives;
 * - every `DefStmt.fn` / `LambdaExpr.fn` (null until resolved) describes the function's frame;
 * - `File.module` (null until resolved) describes the module's frame.
 * The contract below mirrors starlark-go's resolve.Binding / resolve.Function / resolve.Module.
 * Only a file that resolved without errors may be evaluated: after errors, some identifiers are
 * left with scope 'undefined'.
 */
import type { Position } from '../../core/index.js';

// ---------------------------------------------------------------------------------------------
// Resolver annotations
// ---------------------------------------------------------------------------------------------

/**
 * Where a variable lives.
 * - `local`: a slot of the current frame: `FunctionInfo.locals[index]` inside a function, or
 *   `ModuleInfo.locals[index]` at top level (comprehension variables, and `load`ed names unless
 *   `loadBindsGlobally`).
 * - `cell`: a local slot of the current function that a nested function captures; the frame keeps a
 *   shared box (cell) in that slot instead of the value. Same index space as `local`.
 * - `free`: a variable of an enclosing function; `index` is into the current function's
 *   `FunctionInfo.freeVars` (the closure's captured cells, in that order).
 * - `global`: a module global; `index` is into `ModuleInfo.globals`.
 * - `predeclared`: a name supplied by the embedder for this module (looked up by `name`).
 * - `universal`: a built-in of the language (`len`, `None`, ...; looked up by `name`).
 * - `undefined`: only left behind on identifiers the resolver reported as errors.
 */
export type Scope = 'undefined' | 'local' | 'cell' | 'free' | 'global' | 'predeclared' | 'universal';

/**
 * One variable. All identifiers denoting the same variable in the same function share one
 * Binding object, so the evaluator may cache per-binding data if it wishes. A `free` identifier
 * has its own Binding (scope free, index into freeVars); the enclosing function's Binding it
 * refers to is `FunctionInfo.freeVars[index]`.
 * Note: a `local` Binding can be turned into `cell` by the resolver later in the same pass; read
 * scopes only after `resolveFile` has returned.
 */
export interface Binding {
  scope: Scope;
  /** Slot number (local/cell/free/global); -1 for predeclared, universal and undefined. */
  index: number;
  /** The variable's name. */
  readonly name: string;
  /** The first binding occurrence (for local/cell/free/global), used in "declared at" messages. */
  readonly first: Identifier | null;
}

/** The frame layout of one `def` or `lambda`, filled by the resolver. */
export interface FunctionInfo {
  /** Name of the def, or "lambda". */
  readonly name: string;
  /** Position of the `def` or `lambda` keyword. */
  readonly pos: Position;
  /**
   * Number of named parameters, excluding `*args` and `**kwargs` (but keyword-only ones included).
   * They occupy locals[0 .. numParams) in declaration order.
   */
  numParams: number;
  /** How many of those (the last ones) are keyword-only (declared after `*` or `*args`). */
  numKwonlyParams: number;
  /** `*args` present: it occupies locals[numParams]. */
  hasVarargs: boolean;
  /** `**kwargs` present: it occupies locals[numParams + (hasVarargs ? 1 : 0)]. */
  hasKwargs: boolean;
  /**
   * Every local slot: parameters first (as above), then other locals in order of first binding.
   * `locals[i].index === i`; scope is 'local' or 'cell'.
   */
  readonly locals: Binding[];
  /** Indices into `locals` of the slots whose scope is 'cell' (ascending). */
  readonly cells: number[];
  /**
   * The variables this function captures, in free-slot order. Each entry is the Binding *in the
   * directly enclosing function*: scope 'cell' (take that frame's cell at `index`) or 'free'
   * (take the enclosing closure's freeVars[index]). Captured when the def/lambda is evaluated.
   */
  readonly freeVars: Binding[];
}

/** The module frame layout, filled by the resolver. */
export interface ModuleInfo {
  /** Top-level local slots: comprehension variables and (unless loadBindsGlobally) loaded names. */
  readonly locals: Binding[];
  /** Indices into `locals` of slots captured by functions defined at top level (scope 'cell'). */
  readonly cells: number[];
  /** Global variables in slot order (`globals[i].index === i`); their names are the module's exports. */
  readonly globals: Binding[];
}

// ---------------------------------------------------------------------------------------------
// File and statements
// ---------------------------------------------------------------------------------------------

export interface File {
  readonly kind: 'File';
  readonly pos: Position;
  /** The file name given to the parser (used in every Position). */
  readonly path: string;
  readonly stmts: Stmt[];
  module: ModuleInfo | null;
}

export type Stmt = AssignStmt | AugAssignStmt | ExprStmt | DefStmt | IfStmt | ForStmt | WhileStmt | ReturnStmt | BreakStmt | ContinueStmt | PassStmt | LoadStmt;

/** `lhs = rhs`. `lhs` is an assignment target (see Target). */
export interface AssignStmt {
  readonly kind: 'AssignStmt';
  readonly pos: Position;
  readonly opPos: Position;
  readonly lhs: Target;
  readonly rhs: Expr;
}

/**
 * `lhs op= rhs`; `op` is the binary operator without `=`. After resolution `lhs` is an Identifier,
 * IndexExpr or DotExpr, possibly inside ParenExpr; the resolver rejects tuples and lists.
 */
export interface AugAssignStmt {
  readonly kind: 'AugAssignStmt';
  readonly pos: Position;
  readonly opPos: Position;
  readonly op: AugmentedOp;
  readonly lhs: Target;
  readonly rhs: Expr;
}

export type AugmentedOp = '+' | '-' | '*' | '/' | '//' | '%' | '&' | '|' | '^' | '<<' | '>>';

export interface ExprStmt {
  readonly kind: 'ExprStmt';
  readonly pos: Position;
  readonly expr: Expr;
}

/** `def name(params): body`. `pos` is the `def` keyword. */
export interface DefStmt {
  readonly kind: 'DefStmt';
  readonly pos: Position;
  readonly name: Identifier;
  readonly params: Param[];
  readonly body: Stmt[];
  fn: FunctionInfo | null;
}

/**
 * One parameter of a def or lambda.
 * - `plain`: `name` (required; keyword-only when after `*`/`*args`)
 * - `default`: `name=default`
 * - `star`: `*name`, or the bare `*` when `name` is null
 * - `starstar`: `**name`
 * `pos` is the name (plain/default) or the `*`/`**` token.
 */
export interface Param {
  readonly kind: 'Param';
  readonly pos: Position;
  readonly mode: 'plain' | 'default' | 'star' | 'starstar';
  readonly name: Identifier | null;
  readonly default: Expr | null;
}

/**
 * `if cond: then else: orelse`. An `elif` is an IfStmt alone in `orelse` with `elif` true.
 * `pos` is the `if` (or `elif`) keyword.
 */
export interface IfStmt {
  readonly kind: 'IfStmt';
  readonly pos: Position;
  readonly elif: boolean;
  readonly cond: Expr;
  readonly then: Stmt[];
  readonly orelse: Stmt[];
}

/** `for vars in iterable: body`. `pos` is the `for` keyword. */
export interface ForStmt {
  readonly kind: 'ForStmt';
  readonly pos: Position;
  readonly vars: Target;
  readonly iterable: Expr;
  readonly body: Stmt[];
}

export interface WhileStmt {
  readonly kind: 'WhileStmt';
  readonly pos: Position;
  readonly cond: Expr;
  readonly body: Stmt[];
}

export interface ReturnStmt {
  readonly kind: 'ReturnStmt';
  readonly pos: Position;
  readonly result: Expr | null;
}

export interface BreakStmt {
  readonly kind: 'BreakStmt';
  readonly pos: Position;
}

export interface ContinueStmt {
  readonly kind: 'ContinueStmt';
  readonly pos: Position;
}

export interface PassStmt {
  readonly kind: 'PassStmt';
  readonly pos: Position;
}

/**
 * `load("module", "a", b="c")`: binds local names `to[i]` to the module's exported `from[i]`.
 * For `"a"` both are (distinct) Identifiers named `a`, positioned just inside the quote.
 * `to[i]` receives a Binding from the resolver; `from[i].binding` stays null.
 */
export interface LoadStmt {
  readonly kind: 'LoadStmt';
  readonly pos: Position;
  readonly module: StringLiteral;
  readonly from: Identifier[];
  readonly to: Identifier[];
  readonly rparen: Position;
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

export type Expr =
  | Identifier
  | IntLiteral
  | FloatLiteral
  | StringLiteral
  | BytesLiteral
  | ListExpr
  | DictExpr
  | TupleExpr
  | ParenExpr
  | UnaryExpr
  | BinaryExpr
  | CondExpr
  | LambdaExpr
  | CallExpr
  | IndexExpr
  | SliceExpr
  | DotExpr
  | Comprehension;

/**
 * What may appear on the left of `=` or after `for`: Identifier, IndexExpr, DotExpr, or a
 * TupleExpr / ListExpr / ParenExpr of targets. The parser accepts any expression there; the
 * resolver reports the others ("can't assign to sliceexpr", as starlark-go and the spec: slices are
 * not assignable), so after resolution the shape holds.
 */
export type Target = Expr;

export interface Identifier {
  readonly kind: 'Identifier';
  readonly pos: Position;
  readonly name: string;
  /** Filled by the resolver (see Binding). */
  binding: Binding | null;
}

/** An int literal. `value` is a JS number when it is a safe integer, else a bigint. `raw` is the source text. */
export interface IntLiteral {
  readonly kind: 'IntLiteral';
  readonly pos: Position;
  readonly value: number | bigint;
  readonly raw: string;
}

export interface FloatLiteral {
  readonly kind: 'FloatLiteral';
  readonly pos: Position;
  readonly value: number;
  readonly raw: string;
}

/** A string literal; `value` is the decoded string (escapes applied), `raw` the source text. */
export interface StringLiteral {
  readonly kind: 'StringLiteral';
  readonly pos: Position;
  readonly value: string;
  readonly raw: string;
}

/** A bytes literal `b"..."`; `value` is the decoded bytes. */
export interface BytesLiteral {
  readonly kind: 'BytesLiteral';
  readonly pos: Position;
  readonly value: Uint8Array;
  readonly raw: string;
}

/** `[a, b]`; `pos` is the `[`. */
export interface ListExpr {
  readonly kind: 'ListExpr';
  readonly pos: Position;
  readonly elems: Expr[];
}

/** `{k: v, ...}`; `pos` is the `{`. */
export interface DictExpr {
  readonly kind: 'DictExpr';
  readonly pos: Position;
  readonly entries: DictEntry[];
}

/** `key: value` inside a DictExpr, or the body of a dict Comprehension. `pos` is the key; `colon` the `:`. */
export interface DictEntry {
  readonly kind: 'DictEntry';
  readonly pos: Position;
  readonly colon: Position;
  readonly key: Expr;
  readonly value: Expr;
}

/**
 * `a, b` or `(a, b)` or `()`. `pos` is the `(` when parenthesized (`parenthesized` true), else the
 * first element. A parenthesized tuple is a TupleExpr directly, not wrapped in a ParenExpr.
 */
export interface TupleExpr {
  readonly kind: 'TupleExpr';
  readonly pos: Position;
  readonly parenthesized: boolean;
  readonly elems: Expr[];
}

/** `(x)`, kept so targets such as `(a) = 1` and printers can tell. `pos` is the `(`. */
export interface ParenExpr {
  readonly kind: 'ParenExpr';
  readonly pos: Position;
  readonly x: Expr;
}

export type UnaryOp = '+' | '-' | '~' | 'not';

/** `op x`; `pos` is the operator. */
export interface UnaryExpr {
  readonly kind: 'UnaryExpr';
  readonly pos: Position;
  readonly op: UnaryOp;
  readonly x: Expr;
}

export type BinaryOp =
  | 'or'
  | 'and'
  | '=='
  | '!='
  | '<'
  | '>'
  | '<='
  | '>='
  | 'in'
  | 'not in'
  | '|'
  | '^'
  | '&'
  | '<<'
  | '>>'
  | '+'
  | '-'
  | '*'
  | '/'
  | '//'
  | '%';

/** `x op y`; `pos` is x's position, `opPos` the operator's (where run-time errors are reported). */
export interface BinaryExpr {
  readonly kind: 'BinaryExpr';
  readonly pos: Position;
  readonly opPos: Position;
  readonly op: BinaryOp;
  readonly x: Expr;
  readonly y: Expr;
}

/** `then if cond else orelse`; `pos` is `then`'s position, `ifPos` the `if`. */
export interface CondExpr {
  readonly kind: 'CondExpr';
  readonly pos: Position;
  readonly ifPos: Position;
  readonly cond: Expr;
  readonly then: Expr;
  readonly orelse: Expr;
}

/** `lambda params: body`; `pos` is the `lambda`. */
export interface LambdaExpr {
  readonly kind: 'LambdaExpr';
  readonly pos: Position;
  readonly params: Param[];
  readonly body: Expr;
  fn: FunctionInfo | null;
}

/**
 * One call argument:
 * - `positional`: `value`
 * - `keyword`: `name=value`
 * - `star`: `*value`
 * - `starstar`: `**value`
 * `pos` is the value, the keyword name, or the `*`/`**`.
 */
export interface Argument {
  readonly kind: 'Argument';
  readonly pos: Position;
  readonly mode: 'positional' | 'keyword' | 'star' | 'starstar';
  /** The keyword's name (keyword mode only). Not resolved: it has no Binding. */
  readonly name: Identifier | null;
  readonly value: Expr;
}

/** `fn(args)`; `pos` is fn's position, `lparen` the `(` where call errors are reported. */
export interface CallExpr {
  readonly kind: 'CallExpr';
  readonly pos: Position;
  readonly lparen: Position;
  readonly fn: Expr;
  readonly args: Argument[];
  readonly rparen: Position;
}

/** `x[index]`; `lbrack` is the `[`. */
export interface IndexExpr {
  readonly kind: 'IndexExpr';
  readonly pos: Position;
  readonly lbrack: Position;
  readonly x: Expr;
  readonly index: Expr;
}

/** `x[lo:hi:step]`, each part optional (null). */
export interface SliceExpr {
  readonly kind: 'SliceExpr';
  readonly pos: Position;
  readonly lbrack: Position;
  readonly x: Expr;
  readonly lo: Expr | null;
  readonly hi: Expr | null;
  readonly step: Expr | null;
}

/** `x.name`; `dot` is the `.`; `name` is not resolved (binding stays null). */
export interface DotExpr {
  readonly kind: 'DotExpr';
  readonly pos: Position;
  readonly dot: Position;
  readonly x: Expr;
  readonly name: Identifier;
}

/**
 * `[body for ... if ...]` (curly false, body an Expr) or `{k: v for ...}` (curly true, body a
 * DictEntry). The first clause is always a ForClause. `pos` is the `[` or `{`.
 * Variables bound by the for-clauses are locals of the enclosing function (or module locals at top
 * level) visible only inside the comprehension, as in starlark-go.
 */
export interface Comprehension {
  readonly kind: 'Comprehension';
  readonly pos: Position;
  readonly curly: boolean;
  readonly body: Expr | DictEntry;
  readonly clauses: (ForClause | IfClause)[];
}

/** `for vars in iterable` inside a comprehension; `pos` is the `for`. */
export interface ForClause {
  readonly kind: 'ForClause';
  readonly pos: Position;
  readonly vars: Target;
  readonly iterable: Expr;
}

/** `if cond` inside a comprehension; `pos` is the `if`. */
export interface IfClause {
  readonly kind: 'IfClause';
  readonly pos: Position;
  readonly cond: Expr;
}

export type Node = File | Stmt | Expr | Param | Argument | DictEntry | ForClause | IfClause;
