import type { Argument, DictEntry, Expr, File, Param, Stmt } from './ast.js';

/**
 * Prints a syntax tree in a canonical, fully parenthesized Starlark-like form, for tests and
 * debugging: every binary, unary, conditional and lambda expression is wrapped in parentheses
 * so the tree's shape (precedence, associativity) is visible; a ParenExpr shows as its own
 * extra pair. Blocks are indented by two spaces; `elif` chains print as written.
 */
export interface PrintOptions {
  /**
   * Show each ParenExpr as an extra pair of parentheses (default true). With false the output is
   * a fixed point: printing the parse of the printed text gives the same text.
   */
  readonly showParens?: boolean;
}

let showParens = true;

export function printFile(file: File, options: PrintOptions = {}): string {
  return withOptions(options, () => {
    const lines: string[] = [];
    printStmts(file.stmts, '', lines);
    return lines.join('\n');
  });
}

export function printStmt(stmt: Stmt, options: PrintOptions = {}): string {
  return withOptions(options, () => {
    const lines: string[] = [];
    printStmts([stmt], '', lines);
    return lines.join('\n');
  });
}

export function printExpr(e: Expr, options: PrintOptions = {}): string {
  return withOptions(options, () => expr(e));
}

function withOptions<T>(options: PrintOptions, print: () => T): T {
  const saved = showParens;
  showParens = options.showParens ?? true;
  try {
    return print();
  } finally {
    showParens = saved;
  }
}

function printStmts(stmts: readonly Stmt[], indent: string, out: string[]): void {
  for (const s of stmts) printOne(s, indent, out);
}

function printOne(s: Stmt, indent: string, out: string[]): void {
  switch (s.kind) {
    case 'AssignStmt':
      out.push(`${indent}${expr(s.lhs)} = ${expr(s.rhs)}`);
      return;
    case 'AugAssignStmt':
      out.push(`${indent}${expr(s.lhs)} ${s.op}= ${expr(s.rhs)}`);
      return;
    case 'ExprStmt':
      out.push(indent + expr(s.expr));
      return;
    case 'DefStmt':
      out.push(`${indent}def ${s.name.name}(${printParams(s.params)}):`);
      printStmts(s.body, indent + '  ', out);
      return;
    case 'IfStmt': {
      out.push(`${indent}${s.elif ? 'elif' : 'if'} ${expr(s.cond)}:`);
      printStmts(s.then, indent + '  ', out);
      const only = s.orelse.length === 1 ? s.orelse[0] : undefined;
      if (only?.kind === 'IfStmt' && only.elif) {
        printOne(only, indent, out);
      } else if (s.orelse.length > 0) {
        out.push(`${indent}else:`);
        printStmts(s.orelse, indent + '  ', out);
      }
      return;
    }
    case 'ForStmt':
      out.push(`${indent}for ${expr(s.vars)} in ${expr(s.iterable)}:`);
      printStmts(s.body, indent + '  ', out);
      return;
    case 'WhileStmt':
      out.push(`${indent}while ${expr(s.cond)}:`);
      printStmts(s.body, indent + '  ', out);
      return;
    case 'ReturnStmt':
      out.push(s.result ? `${indent}return ${expr(s.result)}` : `${indent}return`);
      return;
    case 'BreakStmt':
      out.push(`${indent}break`);
      return;
    case 'ContinueStmt':
      out.push(`${indent}continue`);
      return;
    case 'PassStmt':
      out.push(`${indent}pass`);
      return;
    case 'LoadStmt': {
      const names = s.to.map((to, i) => {
        const from = s.from[i]!.name;
        return to.name === from ? JSON.stringify(from) : `${to.name}=${JSON.stringify(from)}`;
      });
      out.push(`${indent}load(${[JSON.stringify(s.module.value), ...names].join(', ')})`);
      return;
    }
  }
}

function printParams(params: readonly Param[]): string {
  return params
    .map((p) => {
      switch (p.mode) {
        case 'plain':
          return p.name!.name;
        case 'default':
          return `${p.name!.name}=${expr(p.default!)}`;
        case 'star':
          return p.name ? `*${p.name.name}` : '*';
        case 'starstar':
          return `**${p.name!.name}`;
      }
    })
    .join(', ');
}

function printArg(a: Argument): string {
  switch (a.mode) {
    case 'positional':
      return expr(a.value);
    case 'keyword':
      return `${a.name!.name}=${expr(a.value)}`;
    case 'star':
      return `*${expr(a.value)}`;
    case 'starstar':
      return `**${expr(a.value)}`;
  }
}

function printEntry(e: DictEntry): string {
  return `${expr(e.key)}: ${expr(e.value)}`;
}

function expr(e: Expr): string {
  switch (e.kind) {
    case 'Identifier':
      return e.name;
    case 'IntLiteral':
      return String(e.value);
    case 'FloatLiteral':
      return printFloat(e.value);
    case 'StringLiteral':
      return JSON.stringify(e.value);
    case 'BytesLiteral':
      return printBytes(e.value);
    case 'ListExpr':
      return `[${e.elems.map(expr).join(', ')}]`;
    case 'DictExpr':
      return `{${e.entries.map(printEntry).join(', ')}}`;
    case 'TupleExpr':
      return e.elems.length === 1 ? `(${expr(e.elems[0]!)},)` : `(${e.elems.map(expr).join(', ')})`;
    case 'ParenExpr':
      return showParens ? `(${expr(e.x)})` : expr(e.x);
    case 'UnaryExpr':
      return e.op === 'not' ? `(not ${expr(e.x)})` : `(${e.op}${expr(e.x)})`;
    case 'BinaryExpr':
      return `(${expr(e.x)} ${e.op} ${expr(e.y)})`;
    case 'CondExpr':
      return `(${expr(e.then)} if ${expr(e.cond)} else ${expr(e.orelse)})`;
    case 'LambdaExpr': {
      const params = printParams(e.params);
      return `(lambda${params ? ' ' + params : ''}: ${expr(e.body)})`;
    }
    case 'CallExpr':
      return `${expr(e.fn)}(${e.args.map(printArg).join(', ')})`;
    case 'IndexExpr':
      return `${expr(e.x)}[${expr(e.index)}]`;
    case 'SliceExpr': {
      const part = (x: Expr | null): string => (x ? expr(x) : '');
      return `${expr(e.x)}[${part(e.lo)}:${part(e.hi)}:${part(e.step)}]`;
    }
    case 'DotExpr':
      // `1 .f` must not print as `1.f`, which would scan as the float `1.` then `f`.
      return shownKind(e.x) === 'IntLiteral' ? `(${expr(e.x)}).${e.name.name}` : `${expr(e.x)}.${e.name.name}`;
    case 'Comprehension': {
      const body = e.body.kind === 'DictEntry' ? printEntry(e.body) : expr(e.body);
      const clauses = e.clauses.map((c) => (c.kind === 'ForClause' ? `for ${expr(c.vars)} in ${expr(c.iterable)}` : `if ${expr(c.cond)}`));
      return e.curly ? `{${body} ${clauses.join(' ')}}` : `[${body} ${clauses.join(' ')}]`;
    }
  }
}

/** The kind of node whose text `expr(e)` starts with (hidden parentheses looked through). */
function shownKind(e: Expr): Expr['kind'] {
  while (!showParens && e.kind === 'ParenExpr') e = e.x;
  return e.kind;
}

function printFloat(f: number): string {
  const s = String(f);
  return /[.eEn]/.test(s) ? s : s + '.0';
}

function printBytes(b: Uint8Array): string {
  let s = 'b"';
  for (const byte of b) {
    if (byte === 0x22 || byte === 0x5c) s += '\\' + String.fromCharCode(byte);
    else if (byte >= 0x20 && byte < 0x7f) s += String.fromCharCode(byte);
    else s += '\\x' + byte.toString(16).padStart(2, '0');
  }
  return s + '"';
}
