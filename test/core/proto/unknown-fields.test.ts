import { afterEach, describe, expect, it } from 'vitest';
import { digestOf, reapi } from '../../../src/core/index.js';
import { must, startTestServer, type TestServer } from '../../scheduler/cache-server-fixture.js';

/** Field 99, varint 42: a field no message of REAPI v2 has, as a newer client might send. */
const UNKNOWN = Buffer.from([0x98, 0x06, 0x2a]);

/** An ActionResult with one output file, with the unknown field inside the OutputFile and at the top. */
function resultFromANewerClient(): Buffer {
  const output = Buffer.concat([reapi.OutputFile.encode({ path: 'out.txt', digest: digestOf(Buffer.from('x')) }), UNKNOWN]);
  const file = Buffer.concat([Buffer.from([0x12, output.length]), output]); // output_files = 2
  return Buffer.concat([file, UNKNOWN]);
}

const count = (haystack: Buffer, needle: Buffer) => {
  let n = 0;
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + 1)) n++;
  return n;
};

let server: TestServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

describe('unknown fields', () => {
  it('survive a decode and encode, at the top and in nested messages', () => {
    const decoded = reapi.ActionResult.decode(resultFromANewerClient());
    expect(decoded.outputFiles[0]?.path).toBe('out.txt');
    expect(count(reapi.ActionResult.encode(decoded), UNKNOWN)).toBe(2);
    // They stay out of the way of equality checks on what Kiln knows.
    expect(decoded).toEqual(reapi.ActionResult.decode(reapi.ActionResult.encode({ outputFiles: [{ path: 'out.txt', digest: digestOf(Buffer.from('x')) }] })));
  });

  it('are stored whole by the action cache: UpdateActionResult from a newer client, GetActionResult gives them back', async () => {
    server = await startTestServer();
    const blob = Buffer.from('x');
    await must(server.cas, server.cas.BatchUpdateBlobs, { instanceName: '', requests: [{ digest: digestOf(blob), data: blob }] });
    const actionDigest = digestOf(Buffer.from('an action'));
    await must(server.ac, server.ac.UpdateActionResult, { instanceName: '', actionDigest, actionResult: reapi.ActionResult.decode(resultFromANewerClient()) });
    const back = await must(server.ac, server.ac.GetActionResult, { instanceName: '', actionDigest });
    expect(count(reapi.ActionResult.encode(back), UNKNOWN)).toBe(2);
  });
});
