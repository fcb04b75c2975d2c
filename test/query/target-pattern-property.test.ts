import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Label } from '../../src/loading/index.js';
import { parseTargetPattern, TargetPatternError } from '../../src/query/index.js';

// Bounded property tests of the target-pattern parser: every input either parses or fails with a
// TargetPatternError, a label is the pattern for itself, wildcards name the package or directory,
// and relative patterns are the absolute ones under the working directory.

const segment = (chars: string, maxLength: number) => fc.array(fc.constantFrom(...chars), { minLength: 1, maxLength }).map((cs) => cs.join(''));
const packageName = fc.array(segment('abcxyz019_-', 6), { maxLength: 4 }).map((s) => s.join('/'));
const targetName = segment('abzAZ09_-+=,.', 8).filter((n) => n !== '.' && n !== '..' && n !== 'all' && n !== 'all-targets');
const repoName = fc.oneof(
  fc.constant(''),
  segment('abcxyz019_', 6).map((r) => `r${r}`),
);
const repoPrefix = (repo: string) => (repo === '' ? '' : `@${repo}`);

const patternish = fc
  .array(fc.constantFrom('@', '@@', '//', '/', ':', 'a', 'pkg', '...', '.', '..', 'all', '*', 'all-targets', '-', ' ', '\\'), { maxLength: 12 })
  .map((parts) => parts.join(''));

describe('target pattern parser properties', () => {
  it('any text parses or fails with a TargetPatternError', () => {
    const check = (text: string) => {
      try {
        parseTargetPattern(text, 'w/d');
      } catch (e) {
        expect(e).toBeInstanceOf(TargetPatternError);
      }
    };
    fc.assert(fc.property(patternish, check), { numRuns: 2000 });
    fc.assert(fc.property(fc.string({ maxLength: 40 }), check), { numRuns: 2000 });
  });

  it('a pattern with one slash or more than two in front is not a valid absolute pattern (Bazel 2.1.0)', () => {
    fc.assert(
      fc.property(fc.constantFrom('/', '///', '////'), packageName, (slashes, pkg) => {
        expect(() => parseTargetPattern(`${slashes}${pkg}`)).toThrow(
          `not a valid absolute pattern (absolute target patterns must start with exactly two slashes): '${slashes}${pkg}'`,
        );
      }),
      { numRuns: 200 },
    );
  });

  it('a label is the pattern for that one target', () => {
    fc.assert(
      fc.property(repoName, packageName, targetName, (repo, pkg, name) => {
        const text = `${repoPrefix(repo)}//${pkg}:${name}`;
        const pattern = parseTargetPattern(text);
        expect(pattern.kind).toBe('single');
        if (pattern.kind === 'single') expect(pattern.label.equals(Label.parse(text))).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('wildcards name the package or the directory', () => {
    fc.assert(
      fc.property(repoName, packageName, fc.constantFrom('all', '*', 'all-targets'), (repo, pkg, wildcard) => {
        const allTargets = wildcard !== 'all';
        expect(parseTargetPattern(`${repoPrefix(repo)}//${pkg}:${wildcard}`)).toMatchObject({ kind: 'package', repo, pkg, allTargets });
        const beneath = pkg === '' ? '...' : `${pkg}/...`;
        expect(parseTargetPattern(`${repoPrefix(repo)}//${beneath}:${wildcard}`)).toMatchObject({ kind: 'beneath', repo, dir: pkg, allTargets });
        expect(parseTargetPattern(`${repoPrefix(repo)}//${beneath}`)).toMatchObject({ kind: 'beneath', repo, dir: pkg, allTargets: false });
      }),
      { numRuns: 1000 },
    );
  });

  it('a relative pattern is the absolute one under the working directory', () => {
    fc.assert(
      fc.property(
        packageName,
        packageName.filter((p) => p !== ''),
        targetName,
        (offset, sub, name) => {
          const under = offset === '' ? sub : `${offset}/${sub}`;
          const strip = ({ text: _text, ...rest }: { text: string }) => rest;
          expect(strip(parseTargetPattern(`${sub}:${name}`, offset))).toEqual(strip(parseTargetPattern(`//${under}:${name}`)));
          expect(strip(parseTargetPattern(`${sub}/...`, offset))).toEqual(strip(parseTargetPattern(`//${under}/...`)));
          if (offset !== '') expect(strip(parseTargetPattern(`:${name}`, offset))).toEqual(strip(parseTargetPattern(`//${offset}:${name}`)));
        },
      ),
      { numRuns: 1000 },
    );
  });
});
