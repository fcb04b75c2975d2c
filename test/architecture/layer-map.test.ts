import { describe, expect, it } from 'vitest';
import { allowedDependencies, layerOf } from './layer-map.js';

// The checker itself must say no to the edges DESIGN.md forbids, or a green run means nothing.
describe('layer map checker', () => {
  const allowed = allowedDependencies();
  it.each([
    ['src/cli', 'src/core', true],
    ['src/cli', 'src/build', true],
    ['src/build', 'src/cli', false],
    ['src/exec', 'src/build', false],
    ['src/exec', 'src/starlark', true],
    ['src/analysis', 'src/loading', true],
    ['src/starlark', 'src/loading', false],
    ['src/core', 'src/starlark', false],
    ['src/loading', 'src/query', false],
    ['scheduler', 'executor', false],
    ['executor', 'scheduler', false],
    ['scheduler', 'src/loading', false],
    ['src/remote', 'src/exec', false],
    ['executor', 'proto/gen', true],
  ])('%s -> %s allowed: %s', (from, to, ok) => {
    expect(allowed.get(from)?.has(to) ?? false).toBe(ok);
  });

  it('places files in layers', () => {
    expect(layerOf('src/starlark/syntax/scanner.ts')).toBe('src/starlark');
    expect(layerOf('proto/gen/reapi.js')).toBe('proto/gen');
    expect(layerOf('scheduler/main.ts')).toBe('scheduler');
    expect(layerOf('bench/x.ts')).toBeUndefined();
  });
});
