import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GENQUERY_COMPRESSION_THRESHOLD, genqueryWrite } from '../../../src/analysis/rules/genquery.js';
import { inProcessContent } from '../../../src/exec/in-process-work.js';

/** What the action writes when it runs (in-process, no input to read). */
async function written(content: Uint8Array, compressedOutput: boolean): Promise<Buffer> {
  const work = genqueryWrite(content, compressedOutput);
  if (work.kind !== 'write_binary') throw new Error(`unexpected work ${work.kind}`);
  return inProcessContent(work, '/nonexistent');
}

describe('genquery write', () => {
  it('writes any bytes exactly (property test)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), async (bytes) => {
        expect(await written(bytes, false)).toEqual(Buffer.from(bytes));
      }),
      { numRuns: 40 },
    );
  });

  it('holds a result above the threshold gzip-compressed in the action', async () => {
    const big = Buffer.from(Array.from({ length: 40_000 }, (_, i) => `//some/package/path:target_${i}\n`).join(''));
    expect(big.length).toBeGreaterThan(GENQUERY_COMPRESSION_THRESHOLD);
    const work = genqueryWrite(big, false);
    expect(work).toMatchObject({ kind: 'write_binary', gunzip: true });
    expect(JSON.stringify(work).length).toBeLessThan(big.length / 2);
    expect((await written(big, false)).equals(big)).toBe(true);
  });

  it('compressed_output: the output is the gzip of the result', async () => {
    const text = Buffer.from('//a:b\n//a:c\n');
    const out = await written(text, true);
    expect(out.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect(gunzipSync(out).equals(text)).toBe(true);
  });
});
