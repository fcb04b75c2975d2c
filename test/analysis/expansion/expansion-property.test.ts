import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GenruleCommandError, prepareGenruleCommand } from '../../../src/analysis/expansion/genrule-command.js';

// Any command text gives a prepared command or a GenruleCommandError naming the rule; never a crash or a hang.
describe('genrule command preparation (property)', () => {
  const piece = fc.oneof(
    fc.string({ maxLength: 8 }),
    fc.constantFrom(
      '$',
      '$$',
      '$(',
      ')',
      '$<',
      '$@',
      '$(SRCS)',
      '$(OUTS)',
      '$(@D)',
      '$(location',
      '$(location :s)',
      '$(locations :s)',
      '$(rootpath s)',
      '$(FOO)',
      ' ',
    ),
  );
  it('never throws anything else', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const cmd = pieces.join('');
        try {
          const c = prepareGenruleCommand({
            ruleLabel: '//p:g',
            commands: { cmd: cmd === '' ? 'true' : cmd },
            srcs: ['p/s'],
            outs: ['out/p/o'],
            ruleDir: 'out/p',
            locations: {
              prerequisites: new Map([['//p:s', { execPaths: ['p/s'], rootPaths: ['p/s'] }]]),
              canonicalize: (raw) => (raw.startsWith(':') ? `//p${raw}` : `//p:${raw}`),
            },
            configVariables: new Map([['TARGET_CPU', 'k8']]),
          });
          expect(c.argv[0]).toBe('/bin/bash');
        } catch (e) {
          if (!(e instanceof GenruleCommandError)) throw e;
          expect(e.message.startsWith('in cmd attribute of genrule rule //p:g: ')).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
