import type { Argument, DictEntry, Expr, File, Param, Stmt } from './ast.js';

/**
 * Prints a syntax tree in a canonical, fully parenthesized Starlark-like form, for tests and
 * debugging: every binary, unary, conditional and lambda expression is wrapped in parentheses
 * so the tree's shape (precedence, associativity) is visible; a ParenExpr shows as its own
 * extra pair. Blocks are indented by two spaces; `elif` chains print as written.
 */
export function printFile(file: File): string {
  const lines: string[] = [];
  printStmts(file.stmts, '', lines);
  return lines.join('\n');
}

export function printStmt(stmt: Stmt): string {
  const lines: string[] = [];
  printStmts([stmt], '', lines);
  return lines.join('\n');
}

function printStmts(stmts: readonly Stmt[], indent: string, out: string[]): void {
  for (const s of stmts) printOne(s, indent, out);
}

function printOne(s: Stmt, indent: string, out: string[]): void {
  switch (s.kind) {
    case 'AssignStmt':
      out.push(`${indent}${printExpr(s.lhs)} = ${printExpr(s.rhs)}`);
      return;
    case 'AugAssignStmt':
      out.push(`${indent}${printExpr(s.lhs)} ${s.op}= ${printExpr(s.rhs)}`);
      return;
    case 'ExprStmt':
      out.push(indent + printExpr(s.expr));
      return;
    case 'DefStmt':
      out.push(`${indent}def ${s.name.name}(${printParams(s.params)}):`);
      printStmts(s.body, indent + '  ', out);
      return;
    case 'IfStmt': {
      out.push(`${indent}${s.elif ? 'elif' : 'if'} ${printExpr(s.cond)}:`);
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
      out.push(`${indent}for ${printExpr(s.vars)} in ${printExpr(s.iterable)}:`);
      printStmts(s.body, indent + '  ', out);
      return;
    case 'WhileStmt':
      out.push(`${indent}while ${printExpr(s.cond)}:`);
      printStmts(s.body, indent + '  ', out);
      return;
    case 'ReturnStmt':
      out.push(s.result ? `${indent}return ${printExpr(s.result)}` : `${indent}return`);
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
          return `${p.name!.name}=${printExpr(p.default!)}`;
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
      return printExpr(a.value);
    case 'keyword':
      return `${a.name!.name}=${printExpr(a.value)}`;
    case 'star':
      return `*${printExpr(a.value)}`;
    case 'starstar':
      return `**${printExpr(a.value)}`;
  }
}

function printEntry(e: DictEntry): string {
  return `${printExpr(e.key)}: ${printExpr(e.value)}`;
}

export function printExpr(e: Expr): string {
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
      return `[${e.elems.map(printExpr).join(', ')}]`;
    case 'DictExpr':
      return `{${e.entries.map(printEntry).join(', ')}}`;
    case 'TupleExpr':
      return e.elems.length === 1 ? `(${printExpr(e.elems[0]!)},)` : `(${e.elems.map(printExpr).join(', ')})`;
    case 'ParenExpr':
      return `(${printExpr(e.x)})`;
    case 'UnaryExpr':
      return e.op === 'not' ? `(not ${printExpr(e.x)})` : `(${e.op}${printExpr(e.x)})`;
    case 'BinaryExpr':
      return `(${printExpr(e.x)} ${e.op} ${printExpr(e.y)})`;
    case 'CondExpr':
      return `(${printExpr(e.then)} if ${printExpr(e.cond)} else ${printExpr(e.orelse)})`;
    case 'LambdaExpr': {
      const params = printParams(e.params);
      return `(lambda${params ? ' ' + params : ''}: ${printExpr(e.body)})`;
    }
    case 'CallExpr':
      return `${printExpr(e.fn)}(${e.args.map(printArg).join(', ')})`;
    case 'IndexExpr':
      return `${printExpr(e.x)}[${printExpr(e.index)}]`;
    case 'SliceExpr': {
      const part = (x: Expr | null): string => (x ? printExpr(x) : '');
      return `${printExpr(e.x)}[${part(e.lo)}:${part(e.hi)}:${part(e.step)}]`;
    }
    case 'DotExpr':
      return `${printExpr(e.x)}.${e.name.name}`;
    case 'Comprehension': {
      const body = e.body.kind === 'DictEntry' ? printEntry(e.body) : printExpr(e.body);
      const clauses = e.clauses.map((c) =>
        c.kind === 'ForClause' ? `for ${printExpr(c.vars)} in ${printExpr(c.iterable)}` : `if ${printExpr(c.cond)}`,
      );
      return e.curly ? `{${body} ${clauses.join(' ')}}` : `[${body} ${clauses.join(' ')}]`;
    }
  }
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
