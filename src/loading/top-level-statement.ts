import type { Position } from '../core/index.js';
import type { CallExpr, File, Stmt, Thread } from '../starlark/index.js';

/** The top-level BUILD statement now running: where it is and, for a call, what it calls. */
export interface StatementInfo {
  readonly pos: Position;
  /** The called function's name when the statement is `f(...)`. */
  readonly callee?: string;
  /** The call's `name` argument (keyword, else first positional) when it is a string literal. */
  readonly nameArgument?: string;
}

const STATEMENTS_KEY = 'kiln.statements';

/**
 * A BUILD file's top-level statements, found by position. Rule functions ask for the statement
 * running on their thread (Bazel 2.1 locates a rule at the outermost BUILD-file call, also for
 * rules declared inside macros) through the thread's call stack: the outermost frame is the BUILD
 * file's top level, and its current call lies inside the statement now running.
 */
export class TopLevelStatements {
  private readonly stmts: readonly Stmt[];

  constructor(file: File) {
    this.stmts = file.stmts.filter((s) => s.kind !== 'LoadStmt' && s.kind !== 'DefStmt');
  }

  /** Makes these the statements {@link runningStatement} looks in for `thread`. */
  attachTo(thread: Thread): void {
    thread.locals.set(STATEMENTS_KEY, this);
  }

  /** The statement containing `pos`: the last one starting at or before it. */
  containing(pos: Position): StatementInfo | undefined {
    let lo = 0;
    let hi = this.stmts.length - 1;
    let found: Stmt | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = this.stmts[mid]!;
      if (s.pos.line < pos.line || (s.pos.line === pos.line && s.pos.col <= pos.col)) {
        found = s;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found && statementInfo(found);
  }
}

/** The top-level BUILD statement `thread` is running, if it runs a BUILD file's top level. */
export function runningStatement(thread: Thread): StatementInfo | undefined {
  const statements = thread.locals.get(STATEMENTS_KEY) as TopLevelStatements | undefined;
  const call: CallExpr | undefined = thread.callSyntax(thread.depth - 1);
  return statements && call && statements.containing(call.pos);
}

/** Bazel 2.1 locates a rule at the start of the outermost call expression. */
function statementInfo(stmt: Stmt): StatementInfo {
  if (stmt.kind !== 'ExprStmt' || stmt.expr.kind !== 'CallExpr') return { pos: stmt.pos };
  const call = stmt.expr;
  const callee = call.fn.kind === 'Identifier' ? call.fn.name : call.fn.kind === 'DotExpr' ? call.fn.name.name : undefined;
  let nameArgument: string | undefined;
  for (const a of call.args) {
    if (a.mode === 'keyword' && a.name?.name === 'name' && a.value.kind === 'StringLiteral') nameArgument = a.value.value;
  }
  const first = call.args[0];
  if (nameArgument === undefined && first?.mode === 'positional' && first.value.kind === 'StringLiteral') nameArgument = first.value.value;
  return { pos: call.pos, ...(callee !== undefined ? { callee } : {}), ...(nameArgument !== undefined ? { nameArgument } : {}) };
}
