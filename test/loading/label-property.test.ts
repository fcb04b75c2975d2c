import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Label, LabelSyntaxError } from '../../src/loading/index.js';

// Bounded property tests of the label parser: every input either parses or fails with a
// LabelSyntaxError, and the canonical form of a label parses back to the same label.

const segment = (chars: string, maxLength: number) => fc.array(fc.constantFrom(...chars), { minLength: 1, maxLength }).map((cs) => cs.join(''));
const packageName = fc.array(segment('abcxyz019_-', 6), { maxLength: 4 }).map((s) => s.join('/'));
const targetName = fc
  .array(segment('abzAZ09_-+=,@~.', 6), { minLength: 1, maxLength: 3 })
  .map((s) => s.join('/'))
  .filter((n) => !/(^|\/)\.{1,2}(\/|$)/.test(n));
const repoName = fc.oneof(
  fc.constant(''),
  segment('abcxyz019_', 6).map((r) => `r${r}`),
);
const label = fc.record({ repo: repoName, pkg: packageName, name: targetName });

/** Strings made mostly of the characters that matter to the parser. */
const labelish = fc
  .array(fc.constantFrom('@', '//', '/', ':', 'a', 'pkg', 'x.txt', '.', '..', '...', '-', ' ', '\\', '\u0000', '\r', 'é', 'all'), { maxLength: 12 })
  .map((parts) => parts.join(''));

describe('label parser properties', () => {
  it('the canonical form of any valid label parses back to it', () => {
    fc.assert(
      fc.property(label, ({ repo, pkg, name }) => {
        const text = `${repo === '' ? '' : `@${repo}`}//${pkg}:${name}`;
        const parsed = Label.parse(text);
        expect([parsed.repo, parsed.pkg, parsed.name]).toEqual([repo, pkg, name]);
        expect(parsed.toString()).toBe(text);
        expect(Label.parse(parsed.toString()).equals(parsed)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('relative forms resolve in the context package', () => {
    fc.assert(
      fc.property(label, ({ repo, pkg, name }) => {
        const context = { repo, pkg };
        const absolute = Label.parse(`${repo === '' ? '' : `@${repo}`}//${pkg}:${name}`);
        expect(Label.parse(`:${name}`, context).equals(absolute)).toBe(true);
        // A bare name starting with `@` is read as a repository, as in Bazel.
        if (!name.startsWith('@')) expect(Label.parse(name, context).equals(absolute)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('any text parses or fails with a LabelSyntaxError, and what parses is stable', () => {
    const check = (text: string) => {
      let parsed: Label;
      try {
        parsed = Label.parse(text, { repo: '', pkg: 'p/q' });
      } catch (e) {
        expect(e).toBeInstanceOf(LabelSyntaxError);
        return;
      }
      expect(Label.parse(parsed.toString()).equals(parsed)).toBe(true);
    };
    fc.assert(fc.property(labelish, check), { numRuns: 2000 });
    fc.assert(fc.property(fc.string({ maxLength: 40 }), check), { numRuns: 2000 });
  });
});
