import { formatPosition, type Position } from '../../core/index.js';
import {
  StarlarkSyntaxError,
  type Binding,
  type CallExpr,
  type Comprehension,
  type Expr,
  type File,
  type FunctionInfo,
  type Identifier,
  type ModuleInfo,
  type Param,
  type Stmt,
} from '../syntax/index.js';
import type { DialectOptions } from './dialect-options.js';
import { nearestName } from './nearest-name.js';
import { StarlarkStaticErrors } from './static-errors.js';

export type NamePredicate = (name: string) => boolean;

/**
 * A set of names: a membership test, or a Set/Map of names. Given as a Set or Map, the names can
 * also be offered as "did you mean" hints (starlark-go cannot, having only predicates).
 */
export type NameSet = NamePredicate | { has(name: string): boolean; keys(): Iterable<string> };

const DOESNT = 'this Starlark dialect does not ';

/**
 * Resolves `file` in place (see the contract in syntax/ast.ts): binds every identifier, lays out
 * every function frame and the module. Throws StarlarkStaticErrors listing every static error.
 */
export function resolveFile(file: File, options: DialectOptions, predeclared: NameSet, universal: NameSet): void {
  const errors = resolveFileCollectingErrors(file, options, predeclared, universal);
  if (errors.length > 0) throw new StarlarkStaticErrors(errors);
}

/** As resolveFile, but returns the static errors (in source order) instead of throwing. */
export function resolveFileCollectingErrors(file: File, options: DialectOptions, predeclared: NameSet, universal: NameSet): StarlarkSyntaxError[] {
  const r = new Resolver(options, predeclared, universal);
  r.stmts(file.stmts);
  r.file.resolveLocalUses();
  r.resolveNonLocalUses(r.file);
  file.module = r.finish();
  return r.sortedErrors();
}

interface Use {
  readonly id: Identifier;
  readonly env: Block;
}

/** A lexical block: the file, a function body, or a comprehension. */
class Block {
  bindings: Map<string, Binding> | null = null;
  readonly children: Block[] = [];
  /** Uses not yet resolved; kept on the nearest function (or file) block. */
  uses: Use[] = [];

  constructor(
    readonly parent: Block | null,
    /** Set for function blocks. */
    readonly fn: FunctionInfo | null,
  ) {}

  bind(name: string, binding: Binding): void {
    (this.bindings ??= new Map()).set(name, binding);
  }

  lookup(name: string): Binding | undefined {
    return this.bindings?.get(name);
  }

  /** Resolves the uses that refer to locals of this function (or file); keeps the rest. */
  resolveLocalUses(): void {
    const unresolved: Use[] = [];
    for (const use of this.uses) {
      const b = lookupLocal(use);
      if (b && (b.scope === 'local' || b.scope === 'cell')) use.id.binding = b;
      else unresolved.push(use);
    }
    this.uses = unresolved;
  }
}

/** Finds `use` among the bindings of its block and the enclosing blocks up to its function. */
function lookupLocal(use: Use): Binding | undefined {
  for (let env: Block | null = use.env; env; env = env.parent) {
    const b = env.lookup(use.id.name);
    if (b) return b;
    if (env.fn) break;
  }
  return undefined;
}

function newFunction(name: string, pos: Position): FunctionInfo {
  return {
    name,
    pos,
    numParams: 0,
    numKwonlyParams: 0,
    hasVarargs: false,
    hasKwargs: false,
    locals: [],
    cells: [],
    freeVars: [],
  };
}

class Resolver {
  readonly file = new Block(null, null);
  private env: Block = this.file;
  private readonly moduleLocals: Binding[] = [];
  private readonly moduleGlobals: Binding[] = [];
  private readonly globals = new Map<string, Binding>();
  /** Predeclared and universal bindings, by name (one Binding per name, shared). */
  private readonly predeclared = new Map<string, Binding>();
  private readonly functions: FunctionInfo[] = [];
  private loops = 0;
  /**
   * Names the "did you mean" hints may still compare against: each hint compares the undefined
   * name with every name in scope, so a generated file with tens of thousands of globals and
   * undefined names would otherwise take quadratic time for hints nobody reads.
   */
  private spellcheckBudget = 200_000;
  private ifStmts = 0;
  private readonly errors: StarlarkSyntaxError[] = [];

  private readonly isPredeclared: NamePredicate;
  private readonly isUniversal: NamePredicate;

  constructor(
    private readonly options: DialectOptions,
    private readonly predeclaredNames: NameSet,
    private readonly universalNames: NameSet,
  ) {
    this.isPredeclared = membership(predeclaredNames);
    this.isUniversal = membership(universalNames);
  }

  finish(): ModuleInfo {
    for (const fn of this.functions) {
      fn.locals.forEach((b, i) => b.scope === 'cell' && fn.cells.push(i));
    }
    const cells: number[] = [];
    this.moduleLocals.forEach((b, i) => b.scope === 'cell' && cells.push(i));
    return { locals: this.moduleLocals, cells, globals: this.moduleGlobals };
  }

  sortedErrors(): StarlarkSyntaxError[] {
    // Stable sort: errors at the same position keep the order they were found in.
    return this.errors.sort((a, b) => a.pos.line - b.pos.line || a.pos.col - b.pos.col);
  }

  private error(pos: Position, message: string): void {
    this.errors.push(new StarlarkSyntaxError(message, pos));
  }

  /** The innermost function block, or the file block. */
  private container(): Block {
    let b = this.env;
    while (!b.fn && b.parent) b = b.parent;
    return b;
  }

  private inFunction(): boolean {
    return this.container().fn !== null;
  }

  private push(b: Block): void {
    this.env.children.push(b);
    this.env = b;
  }

  private pop(): void {
    this.env = this.env.parent!;
  }

  // --- binding -------------------------------------------------------------------------------

  /**
   * Binds `id`: a global at top level (reporting a second binding unless globalReassign), a local
   * elsewhere. Returns whether the name was already bound in that block.
   */
  private bind(id: Identifier): boolean {
    if (this.env === this.file) {
      let b = this.file.lookup(id.name);
      let existed = b !== undefined;
      if (!b) {
        b = this.globals.get(id.name);
        existed = b !== undefined;
        if (!b) {
          b = { scope: 'global', index: this.moduleGlobals.length, name: id.name, first: id };
          this.globals.set(id.name, b);
          this.moduleGlobals.push(b);
        }
      }
      if (existed && !this.options.globalReassign) {
        this.error(id.pos, `cannot reassign ${b.scope} ${id.name} declared at ${formatFirst(b)}`);
      }
      id.binding = b;
      return existed;
    }
    return this.bindLocal(id);
  }

  private bindLocal(id: Identifier): boolean {
    const existed = this.env.lookup(id.name) !== undefined;
    if (!existed) {
      const fn = this.container().fn;
      const locals = fn ? fn.locals : this.moduleLocals;
      const b: Binding = { scope: 'local', index: locals.length, name: id.name, first: id };
      this.env.bind(id.name, b);
      locals.push(b);
    }
    this.use(id);
    return existed;
  }

  private use(id: Identifier): void {
    // Bazel's legacy semantics: a top-level use refers to whatever is bound at that point.
    if (this.options.globalReassign && this.env === this.file) {
      this.useToplevel({ id, env: this.env });
      return;
    }
    this.container().uses.push({ id, env: this.env });
  }

  /** Resolves a use at file level: loaded name, global, predeclared, universal, or undefined. */
  private useToplevel(use: Use): Binding {
    const { id } = use;
    let b = this.file.lookup(id.name) ?? this.globals.get(id.name) ?? this.predeclared.get(id.name);
    if (!b) {
      if (this.isPredeclared(id.name)) {
        b = { scope: 'predeclared', index: -1, name: id.name, first: null };
        this.predeclared.set(id.name, b);
      } else if (this.isUniversal(id.name)) {
        b = { scope: 'universal', index: -1, name: id.name, first: null };
        this.predeclared.set(id.name, b);
      } else {
        b = { scope: 'undefined', index: -1, name: id.name, first: null };
        const hint = this.spellcheck(use);
        this.error(id.pos, `undefined: ${id.name}${hint ? ` (did you mean ${hint}?)` : ''}`);
      }
    }
    if (b.scope === 'universal' && id.name === 'set' && !this.options.set) {
      this.error(id.pos, DOESNT + 'support sets');
    }
    id.binding = b;
    return b;
  }

  private spellcheck(use: Use): string | undefined {
    if (this.spellcheckBudget <= 0) return undefined;
    const names: string[] = [];
    for (let b: Block | null = use.env; b; b = b.parent) {
      if (b.bindings) for (const name of b.bindings.keys()) names.push(name);
    }
    for (const g of this.moduleGlobals) names.push(g.name);
    for (const set of [this.predeclaredNames, this.universalNames]) {
      if (typeof set !== 'function') for (const name of set.keys()) names.push(name);
    }
    this.spellcheckBudget -= names.length;
    return nearestName(use.id.name, names.sort());
  }

  resolveNonLocalUses(b: Block): void {
    for (const child of b.children) this.resolveNonLocalUses(child);
    for (const use of b.uses) use.id.binding = this.lookupLexical(use, use.env);
  }

  /**
   * Finds `use` in `env` or its ancestors. Crossing a function boundary turns the outer local into
   * a cell and records it as a free variable of each function in between.
   */
  private lookupLexical(use: Use, env: Block): Binding {
    if (env === this.file) return this.useToplevel(use);
    let b = env.lookup(use.id.name);
    if (!b) {
      b = this.lookupLexical(use, env.parent!);
      if (env.fn && (b.scope === 'local' || b.scope === 'cell' || b.scope === 'free')) {
        if (b.scope === 'local') b.scope = 'cell';
        const index = env.fn.freeVars.length;
        env.fn.freeVars.push(b);
        b = { scope: 'free', index, name: b.name, first: b.first };
      }
      // Memoize, so a name is captured once and a failing global lookup is reported per use only.
      env.bind(use.id.name, b);
    }
    return b;
  }

  // --- statements ----------------------------------------------------------------------------

  stmts(stmts: readonly Stmt[]): void {
    for (const s of stmts) this.stmt(s);
  }

  private stmt(s: Stmt): void {
    switch (s.kind) {
      case 'ExprStmt':
        this.expr(s.expr);
        return;
      case 'BreakStmt':
        if (this.loops === 0) this.error(s.pos, 'break not in a loop');
        return;
      case 'ContinueStmt':
        if (this.loops === 0) this.error(s.pos, 'continue not in a loop');
        return;
      case 'PassStmt':
        return;
      case 'IfStmt':
        if (!this.options.topLevelControl && !this.inFunction() && !s.elif) {
          this.error(s.pos, 'if statement not within a function');
        }
        this.expr(s.cond);
        this.ifStmts++;
        this.stmts(s.then);
        this.stmts(s.orelse);
        this.ifStmts--;
        return;
      case 'AssignStmt':
        this.expr(s.rhs);
        this.assign(s.lhs, false);
        return;
      case 'AugAssignStmt':
        this.expr(s.rhs);
        this.assign(s.lhs, true);
        return;
      case 'DefStmt': {
        this.bind(s.name);
        const fn = newFunction(s.name.name, s.pos);
        s.fn = fn;
        this.function(fn, s.params, s.body, null);
        return;
      }
      case 'ForStmt':
        if (!this.options.topLevelControl && !this.inFunction()) {
          this.error(s.pos, 'for loop not within a function');
        }
        this.expr(s.iterable);
        this.assign(s.vars, false);
        this.loops++;
        this.stmts(s.body);
        this.loops--;
        return;
      case 'WhileStmt':
        if (!this.options.while) this.error(s.pos, DOESNT + 'support while loops');
        if (!this.options.topLevelControl && !this.inFunction()) {
          this.error(s.pos, 'while loop not within a function');
        }
        this.expr(s.cond);
        this.loops++;
        this.stmts(s.body);
        this.loops--;
        return;
      case 'ReturnStmt':
        if (!this.inFunction()) this.error(s.pos, 'return statement not within a function');
        if (s.result) this.expr(s.result);
        return;
      case 'LoadStmt':
        if (this.inFunction()) this.error(s.pos, 'load statement within a function');
        else if (this.loops > 0) this.error(s.pos, 'load statement within a loop');
        else if (this.ifStmts > 0) this.error(s.pos, 'load statement within a conditional');
        for (let i = 0; i < s.from.length; i++) {
          const from = s.from[i]!;
          if (from.name === '') {
            this.error(from.pos, 'load: empty identifier');
            continue;
          }
          if (from.name.startsWith('_')) {
            this.error(from.pos, `load: names with leading underscores are not exported: ${from.name}`);
          }
          const to = s.to[i]!;
          if (this.options.loadBindsGlobally) {
            this.bind(to);
            continue;
          }
          const global = this.globals.get(to.name);
          if (this.bindLocal(to) && !this.options.globalReassign) {
            this.error(to.pos, `cannot reassign top-level ${to.name}`);
          } else if (global && !this.options.globalReassign) {
            // Not checked by starlark-go, but a load shadowing an earlier global is surely a mistake.
            this.error(to.pos, `cannot reassign global ${to.name} declared at ${formatFirst(global)}`);
          }
        }
        return;
    }
  }

  private assign(lhs: Expr, augmented: boolean): void {
    switch (lhs.kind) {
      case 'Identifier':
        this.bind(lhs);
        return;
      case 'IndexExpr':
        this.expr(lhs.x);
        this.expr(lhs.index);
        return;
      case 'DotExpr':
        this.expr(lhs.x);
        return;
      case 'TupleExpr':
        if (augmented) this.error(lhs.pos, "can't use tuple expression in augmented assignment");
        for (const e of lhs.elems) this.assign(e, augmented);
        return;
      case 'ListExpr':
        if (augmented) this.error(lhs.pos, "can't use list expression in augmented assignment");
        for (const e of lhs.elems) this.assign(e, augmented);
        return;
      case 'ParenExpr':
        this.assign(lhs.x, augmented);
        return;
      default:
        this.error(lhs.pos, `can't assign to ${describeTarget(lhs)}`);
    }
  }

  // --- expressions ---------------------------------------------------------------------------

  private expr(e: Expr): void {
    switch (e.kind) {
      case 'Identifier':
        this.use(e);
        return;
      case 'IntLiteral':
      case 'FloatLiteral':
      case 'StringLiteral':
      case 'BytesLiteral':
        return;
      case 'ListExpr':
      case 'TupleExpr':
        for (const x of e.elems) this.expr(x);
        return;
      case 'DictExpr':
        for (const entry of e.entries) {
          this.expr(entry.key);
          this.expr(entry.value);
        }
        return;
      case 'ParenExpr':
      case 'UnaryExpr':
        this.expr(e.x);
        return;
      case 'BinaryExpr':
        this.expr(e.x);
        this.expr(e.y);
        return;
      case 'CondExpr':
        this.expr(e.cond);
        this.expr(e.then);
        this.expr(e.orelse);
        return;
      case 'IndexExpr':
        this.expr(e.x);
        this.expr(e.index);
        return;
      case 'SliceExpr':
        this.expr(e.x);
        if (e.lo) this.expr(e.lo);
        if (e.hi) this.expr(e.hi);
        if (e.step) this.expr(e.step);
        return;
      case 'DotExpr':
        this.expr(e.x);
        return;
      case 'CallExpr':
        this.call(e);
        return;
      case 'LambdaExpr': {
        const fn = newFunction('lambda', e.pos);
        e.fn = fn;
        this.function(fn, e.params, null, e.body);
        return;
      }
      case 'Comprehension':
        this.comprehension(e);
        return;
    }
  }

  private comprehension(e: Comprehension): void {
    // The first iterable is evaluated in the enclosing block; everything else in the new one.
    const first = e.clauses[0]!;
    if (first.kind === 'ForClause') this.expr(first.iterable);
    this.push(new Block(this.env, null));
    for (let i = 0; i < e.clauses.length; i++) {
      const clause = e.clauses[i]!;
      if (clause.kind === 'IfClause') {
        this.expr(clause.cond);
      } else {
        this.assign(clause.vars, false);
        if (i > 0) this.expr(clause.iterable);
      }
    }
    if (e.body.kind === 'DictEntry') {
      this.expr(e.body.key);
      this.expr(e.body.value);
    } else {
      this.expr(e.body);
    }
    this.pop();
  }

  private call(e: CallExpr): void {
    this.expr(e.fn);
    let seenVarargs = false;
    let seenKwargs = false;
    let seenNames: Set<string> | null = null;
    let positional = 0;
    let keyword = 0;
    for (const arg of e.args) {
      switch (arg.mode) {
        case 'starstar':
          if (seenKwargs) this.error(arg.pos, 'multiple **kwargs not allowed');
          seenKwargs = true;
          break;
        case 'star':
          if (seenKwargs) this.error(arg.pos, '*args may not follow **kwargs');
          else if (seenVarargs) this.error(arg.pos, 'multiple *args not allowed');
          seenVarargs = true;
          break;
        case 'keyword': {
          keyword++;
          if (seenKwargs) this.error(arg.pos, 'keyword argument may not follow **kwargs');
          else if (seenVarargs) this.error(arg.pos, 'keyword argument may not follow *args');
          const name = arg.name!.name;
          if (seenNames?.has(name)) this.error(arg.name!.pos, `keyword argument "${name}" is repeated`);
          else (seenNames ??= new Set()).add(name);
          break;
        }
        case 'positional':
          positional++;
          if (seenVarargs) this.error(arg.pos, 'positional argument may not follow *args');
          else if (seenKwargs) this.error(arg.pos, 'positional argument may not follow **kwargs');
          else if (seenNames) this.error(arg.pos, 'positional argument may not follow named');
          break;
      }
      this.expr(arg.value);
    }
    if (positional >= 256) this.error(e.pos, `${positional} positional arguments in call, limit is 255`);
    if (keyword >= 256) this.error(e.pos, `${keyword} keyword arguments in call, limit is 255`);
  }

  /** Resolves a def (body) or lambda (bodyExpr): defaults outside, parameters and body inside. */
  private function(fn: FunctionInfo, params: readonly Param[], body: readonly Stmt[] | null, bodyExpr: Expr | null): void {
    for (const p of params) if (p.default) this.expr(p.default);

    const b = new Block(this.env, fn);
    this.push(b);
    this.functions.push(fn);
    const outerLoops = this.loops;
    this.loops = 0;

    let seenOptional = false;
    let star: Param | null = null;
    let starStar: Identifier | null = null;
    let numParams = 0;
    let numKwonly = 0;
    for (const p of params) {
      switch (p.mode) {
        case 'plain':
        case 'default': {
          const id = p.name!;
          if (starStar) {
            const kind = p.mode === 'plain' ? 'required' : 'optional';
            this.error(p.pos, `${kind} parameter may not follow **${starStar.name}`);
          } else if (star) {
            numKwonly++;
          } else if (p.mode === 'plain' && seenOptional) {
            this.error(p.pos, 'required parameter may not follow optional');
          }
          if (p.mode === 'default') seenOptional = true;
          if (this.bind(id)) this.error(id.pos, `duplicate parameter: ${id.name}`);
          else numParams++;
          break;
        }
        case 'star':
          if (starStar) this.error(p.pos, `* parameter may not follow **${starStar.name}`);
          else if (star) this.error(p.pos, 'multiple * parameters not allowed');
          else star = p;
          break;
        case 'starstar':
          if (starStar) this.error(p.pos, 'multiple ** parameters not allowed');
          starStar = p.name!;
          break;
      }
    }
    // *args and **kwargs take the slots after the named parameters, so those stay contiguous.
    if (star) {
      if (star.name) {
        if (this.bind(star.name)) this.error(star.name.pos, `duplicate parameter: ${star.name.name}`);
        fn.hasVarargs = true;
      } else if (numKwonly === 0) {
        this.error(star.pos, 'bare * must be followed by keyword-only parameters');
      }
    }
    if (starStar) {
      if (this.bind(starStar)) this.error(starStar.pos, `duplicate parameter: ${starStar.name}`);
      fn.hasKwargs = true;
    }
    fn.numParams = numParams;
    fn.numKwonlyParams = numKwonly;

    if (body) this.stmts(body);
    else this.expr(bodyExpr!);
    b.resolveLocalUses();
    this.pop();
    this.loops = outerLoops;
  }
}

function membership(names: NameSet): NamePredicate {
  return typeof names === 'function' ? names : (name) => names.has(name);
}

function formatFirst(b: Binding): string {
  const p = b.first?.pos;
  return p ? formatPosition(p) : '?';
}

/** starlark-go's name for a node that cannot be assigned to. */
function describeTarget(e: Expr): string {
  switch (e.kind) {
    case 'IntLiteral':
    case 'FloatLiteral':
    case 'StringLiteral':
    case 'BytesLiteral':
      return 'literal';
    default:
      return e.kind.toLowerCase();
  }
}
