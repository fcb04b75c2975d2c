import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseImageTag } from '../../executor/index.js';

const RECIPE = join(import.meta.dirname, '../../deploy/base-image');

describe('baseImageTag', () => {
  it('is the tag deploy/base-image/build.sh gives the image of the same recipe', () => {
    // build.sh: cat build.sh packages.txt | sha256sum | cut -c1-16
    const hash = execFileSync('bash', ['-c', 'cat build.sh packages.txt | sha256sum | cut -c1-16'], { cwd: RECIPE, encoding: 'utf8' }).trim();
    expect(baseImageTag(RECIPE)).toBe(`kiln/base:${hash}`);
    expect(
      execFileSync('grep', ['-c', 'cat "$HERE/build.sh" "$HERE/packages.txt" | sha256sum | cut -c1-16', join(RECIPE, 'build.sh')], { encoding: 'utf8' }).trim(),
    ).toBe('1');
  });
});
