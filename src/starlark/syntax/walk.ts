import type * as ast from './ast.js';

/** What {@link walk} calls for each node: return false to skip the node's children. */
export type Visitor = (node: ast.Node) => boolean | void;

/**
 * Visits `node` and then, unless the visitor returns false, each of its children in source order
 * (starlark-go's syntax.Walk). Children are the syntax nodes only: identifiers' bindings and the
 * resolver's frame descriptions are annotations, not children.
 */
export function walk(node: ast.Node, visit: Visitor): void {
  if (visit(node) === false) return;
  const all = (nodes: readonly ast.Node[]): void => {
    for (const n of nodes) walk(n, visit);
  };
  const opt = (n: ast.Node | null): void => {
    if (n !== null) walk(n, visit);
  };
  switch (node.kind) {
    case 'File':
      return all(node.stmts);
    case 'AssignStmt':
    case 'AugAssignStmt':
      walk(node.lhs, visit);
      return walk(node.rhs, visit);
    case 'ExprStmt':
      return walk(node.expr, visit);
    case 'DefStmt':
      walk(node.name, visit);
      all(node.params);
      return all(node.body);
    case 'Param':
      opt(node.name);
      return opt(node.default);
    case 'IfStmt':
      walk(node.cond, visit);
      all(node.then);
      return all(node.orelse);
    case 'ForStmt':
      walk(node.vars, visit);
      walk(node.iterable, visit);
      return all(node.body);
    case 'WhileStmt':
      walk(node.cond, visit);
      return all(node.body);
    case 'ReturnStmt':
      return opt(node.result);
    case 'LoadStmt':
      walk(node.module, visit);
      for (let i = 0; i < node.to.length; i++) {
        walk(node.to[i]!, visit);
        walk(node.from[i]!, visit);
      }
      return;
    case 'ListExpr':
    case 'TupleExpr':
      return all(node.elems);
    case 'DictExpr':
      return all(node.entries);
    case 'DictEntry':
      walk(node.key, visit);
      return walk(node.value, visit);
    case 'ParenExpr':
    case 'UnaryExpr':
      return walk(node.x, visit);
    case 'BinaryExpr':
      walk(node.x, visit);
      return walk(node.y, visit);
    case 'CondExpr':
      walk(node.then, visit);
      walk(node.cond, visit);
      return walk(node.orelse, visit);
    case 'LambdaExpr':
      all(node.params);
      return walk(node.body, visit);
    case 'CallExpr':
      walk(node.fn, visit);
      return all(node.args);
    case 'Argument':
      opt(node.name);
      return walk(node.value, visit);
    case 'IndexExpr':
      walk(node.x, visit);
      return walk(node.index, visit);
    case 'SliceExpr':
      walk(node.x, visit);
      opt(node.lo);
      opt(node.hi);
      return opt(node.step);
    case 'DotExpr':
      walk(node.x, visit);
      return walk(node.name, visit);
    case 'Comprehension':
      // Source order: the body comes first even though the clauses bind its names.
      walk(node.body, visit);
      return all(node.clauses);
    case 'ForClause':
      walk(node.vars, visit);
      return walk(node.iterable, visit);
    case 'IfClause':
      return walk(node.cond, visit);
    case 'Identifier':
    case 'IntLiteral':
    case 'FloatLiteral':
    case 'StringLiteral':
    case 'BytesLiteral':
    case 'BreakStmt':
    case 'ContinueStmt':
    case 'PassStmt':
      return;
    default: {
      // A node kind added to ast.ts must be added here: this stops compiling until it is.
      const unknown: never = node;
      throw new Error(`walk: unknown node ${(unknown as ast.Node).kind}`);
    }
  }
}
