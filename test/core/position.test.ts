import { describe, expect, it } from 'vitest';
import { formatPosition, position } from '../../src/core/index.js';

describe('formatPosition', () => {
  it('prints file:line:col', () => {
    expect(formatPosition(position('pkg/BUILD', 12, 8))).toBe('pkg/BUILD:12:8');
  });

  it('leaves out an unknown column (0), as Bazel prints a Location', () => {
    // A source file's location is its BUILD file's line 1, with no column (query --output=location).
    expect(formatPosition(position('pkg/BUILD', 1, 0))).toBe('pkg/BUILD:1');
  });
});
