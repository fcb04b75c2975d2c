import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_SETUP_SCRIPT } from '../../../src/analysis/rules/test-setup-script.js';

const dir = mkdtempSync(join(tmpdir(), 'kiln-test-setup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The script's `xml_character_data` function, run alone on `bytes`. */
function characterData(bytes: Uint8Array): Buffer {
  const fn = /^xml_character_data\(\) \{\n[\s\S]*?\n\}\n/m.exec(TEST_SETUP_SCRIPT)?.[0];
  if (!fn) throw new Error('xml_character_data not found in the test setup script');
  const log = join(dir, 'test.log');
  writeFileSync(log, bytes);
  return execFileSync('/bin/bash', ['-c', `${fn}xml_character_data "$1"`, 'bash', log]);
}

/** What the script's builtins stand for: tr and sed over the whole log. */
function withTrAndSed(bytes: Uint8Array): Buffer {
  const log = join(dir, 'reference.log');
  writeFileSync(log, bytes);
  return execFileSync('/bin/bash', ['-c', String.raw`LC_ALL=C tr -d '\000-\010\013\014\016-\037' < "$1" | sed 's|]]>|]]>]]<![CDATA[>|g'`, 'bash', log]);
}

// Bytes that matter: controls (NUL, the ones XML forbids, tab, CR, LF), "]]>" pieces, DEL and high bytes.
const interesting = fc.constantFrom(0, 1, 8, 9, 10, 11, 12, 13, 14, 27, 31, 32, 62, 93, 97, 127, 128, 195, 255);
const logBytes = fc.array(fc.oneof(interesting, fc.constant(93), fc.integer({ min: 0, max: 255 })), { maxLength: 400 }).map((a) => Uint8Array.from(a));

describe('test setup script: the log as XML character data', () => {
  it('a short log by builtins gives exactly what tr and sed give', () => {
    fc.assert(
      fc.property(logBytes, (bytes) => {
        expect(characterData(bytes).equals(withTrAndSed(bytes))).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('"]]>" split so the CDATA section holds; NUL and forbidden controls dropped; tab, CR, LF kept', () => {
    expect(characterData(Buffer.from('a]]>b\x00c\x01\x1fd\t\r\ne')).toString('latin1')).toBe('a]]>]]<![CDATA[>bcd\t\r\ne');
  });

  it('a log longer than 64 KiB goes through tr and sed, whole', () => {
    const big = Buffer.from(`${'x'.repeat(70_000)}]]>\x01end`);
    const out = characterData(big);
    expect(out.length).toBe(70_000 + ']]>]]<![CDATA[>'.length + 'end'.length);
    expect(out.equals(withTrAndSed(big))).toBe(true);
  });
});
