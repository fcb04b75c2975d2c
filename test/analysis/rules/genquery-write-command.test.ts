import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { GENQUERY_COMPRESSION_THRESHOLD, genqueryWriteCommand } from '../../../src/analysis/rules/genquery.js';

const dir = mkdtempSync(join(tmpdir(), 'kiln-genquery-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the command as execution would (from a script file, as it does past 64 KiB) and returns what it wrote. */
function run(command: string): Buffer {
  writeFileSync(join(dir, 'script.sh'), command);
  execFileSync('/bin/sh', ['script.sh'], { cwd: dir });
  return readFileSync(join(dir, 'out'));
}

describe('genquery write command', () => {
  it('writes text through a quoted here-document, untouched by the shell', () => {
    const text = "//a:b\n//a:$HOME\n//a:`x`\n//a:'q'\nKILN_GENQUERY_EOF\n";
    const command = genqueryWriteCommand(Buffer.from(text), 'out', false);
    expect(command).toMatch(/^cat > 'out' <<'KILN_GENQUERY_EOF_+'\n/);
    expect(run(command).toString()).toBe(text);
    expect(run(genqueryWriteCommand(new Uint8Array(), 'out', false)).length).toBe(0);
  });

  it('writes any bytes exactly through printf escapes (property test)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(run(genqueryWriteCommand(bytes, 'out', true))).toEqual(Buffer.from(bytes));
      }),
      { numRuns: 40, examples: [[Uint8Array.from([0x2d, 0])], [Uint8Array.from([0x2d, 0x2d, 0x78])]] },
    );
  });

  it('holds a result above the threshold gzip-compressed in the command', () => {
    const big = Buffer.from(Array.from({ length: 40_000 }, (_, i) => `//some/package/path:target_${i}\n`).join(''));
    expect(big.length).toBeGreaterThan(GENQUERY_COMPRESSION_THRESHOLD);
    const command = genqueryWriteCommand(big, 'out', false);
    expect(command).toContain('| gzip -dc >');
    expect(command.length).toBeLessThan(big.length / 2);
    expect(run(command).equals(big)).toBe(true);
    // compressed_output: the gzip bytes are the output, written as they are.
    const zipped = gzipSync(big);
    expect(run(genqueryWriteCommand(zipped, 'out', true)).equals(zipped)).toBe(true);
  });
});
