import { describe, expect, it } from 'vitest';
import { execFile, Thread, type Value } from '../../../src/starlark/index.js';

/** `e` and its causes, outermost first, each as `Name: message`. */
function chain(e: unknown): string[] {
  const links: string[] = [];
  for (let cur = e; cur instanceof Error; cur = cur.cause) links.push(`${cur.name}: ${cur.message}`);
  return links;
}

function failure(source: string): unknown {
  try {
    execFile(new Thread('t', {}, {}), 't.star', source, new Map<string, Value>());
  } catch (e) {
    return e;
  }
  throw new Error('expected a failure');
}

/** Adding context (a position, a builtin's name) makes a new error that keeps the old one as its cause. */
describe('errors that add context keep the original as their cause', () => {
  it('the evaluator positions a builtin failure in a new error', () => {
    expect(chain(failure('x = [].pop()\n'))).toEqual([
      'EvalError: pop: index -1 out of range: empty list',
      'StarlarkError: pop: index -1 out of range: empty list',
    ]);
  });

  it('a builtin wrapping a host failure (a float too large for an int)', () => {
    const links = chain(failure('x = int(float("inf"))\n'));
    expect(links.length).toBe(3);
    expect(links[1]).toMatch(/^StarlarkError: int: /);
    expect(links[2]).not.toMatch(/int: /);
  });
});
