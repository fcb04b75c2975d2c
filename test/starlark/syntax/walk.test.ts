import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseFile, walk, type Node } from '../../../src/starlark/index.js';

const TESTDATA = join(dirname(fileURLToPath(import.meta.url)), '../testdata');

/** Every node reachable by reflection over the tree's own properties: what walk must reach too. */
function nodesByReflection(root: Node): Set<Node> {
  const found = new Set<Node>();
  const visit = (v: unknown): void => {
    if (v === null || typeof v !== 'object' || v instanceof Uint8Array) return;
    if (Array.isArray(v)) {
      for (const x of v) visit(x);
      return;
    }
    const o = v as Record<string, unknown>;
    if (typeof o['kind'] !== 'string' || found.has(o as unknown as Node)) return;
    found.add(o as unknown as Node);
    // Run before resolution, so no annotation (binding, fn, module) leads anywhere yet.
    for (const x of Object.values(o)) visit(x);
  };
  visit(root);
  return found;
}

function kinds(source: string, skip?: (n: Node) => boolean): string[] {
  const out: string[] = [];
  walk(parseFile(source, 'w.star'), (n) => {
    out.push(n.kind);
    return skip ? !skip(n) : undefined;
  });
  return out;
}

describe('walk', () => {
  it('visits every node in source order, parents before children', () => {
    expect(kinds('x = f(1, k = [a[0]], *s)\n')).toEqual([
      'File',
      'AssignStmt',
      'Identifier',
      'CallExpr',
      'Identifier',
      'Argument',
      'IntLiteral',
      'Argument',
      'Identifier',
      'ListExpr',
      'IndexExpr',
      'Identifier',
      'IntLiteral',
      'Argument',
      'Identifier',
    ]);
    expect(kinds('def g(p, q = 2):\n    return {k: v for k, v in p if q}\n')).toEqual([
      'File',
      'DefStmt',
      'Identifier',
      'Param',
      'Identifier',
      'Param',
      'Identifier',
      'IntLiteral',
      'ReturnStmt',
      'Comprehension',
      'DictEntry',
      'Identifier',
      'Identifier',
      'ForClause',
      'TupleExpr',
      'Identifier',
      'Identifier',
      'Identifier',
      'IfClause',
      'Identifier',
    ]);
  });

  it('skips the children of a node whose visit returns false', () => {
    expect(kinds('f(g(1))\nh(2)\n', (n) => n.kind === 'CallExpr')).toEqual(['File', 'ExprStmt', 'CallExpr', 'ExprStmt', 'CallExpr']);
  });

  it('reaches every node of every conformance file, each once', () => {
    const files = readdirSync(TESTDATA).filter((f) => f.endsWith('.star'));
    expect(files.length).toBeGreaterThan(10);
    let total = 0;
    for (const name of files) {
      for (const [i, chunk] of readFileSync(join(TESTDATA, name), 'utf8').split('\n---\n').entries()) {
        let file: Node;
        try {
          file = parseFile(chunk, `${name}#${i}`);
        } catch {
          continue; // chunks that test syntax errors
        }
        const walked: Node[] = [];
        walk(file, (n) => void walked.push(n));
        expect(new Set(walked).size, `${name} chunk ${i}`).toBe(walked.length);
        const reflected = nodesByReflection(file);
        const missed = [...reflected].filter((n) => !walked.includes(n)).map((n) => `${n.kind} at ${n.pos.line}:${n.pos.col}`);
        expect(missed, `${name} chunk ${i}`).toEqual([]);
        expect(walked.length, `${name} chunk ${i}`).toBe(reflected.size);
        total += walked.length;
      }
    }
    expect(total).toBeGreaterThan(10_000);
  });
});
