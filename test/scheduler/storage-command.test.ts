import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/commands/storage.js';
import type { CliIO } from '../../src/cli/io.js';
import { blob, connect, must } from './cache-server-fixture.js';
import { parseServerLog, serverLogText } from '../setup/server-log.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-storage-cmd-'));
  await writeFile(join(dir, 'bad.json'), '{"storage": ');
  await writeFile(join(dir, 'execution.json'), JSON.stringify({ storage: { kind: 'memory' }, execution: {} }));
  await writeFile(
    join(dir, 'endpoint.json'),
    JSON.stringify({ instances: { '': { cas: { kind: 'grpc', endpoint: 'ftp://node:1' }, actionCache: { kind: 'memory', maxBytes: 1000 } } } }),
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Runs `kiln storage ARGS` in process; with `untilServing`, runs it on the printed endpoint, then interrupts the node. */
async function run(args: string[], untilServing?: (endpoint: string) => Promise<void>): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  let interrupt = () => undefined as void;
  let serving = (_endpoint: string) => undefined as void;
  const started = new Promise<string>((resolve) => (serving = resolve));
  const io: CliIO = {
    stdout: { write: (c) => ((stdout += c.toString()), stdout.includes('\n') && serving(stdout.split('\n')[0]!)) },
    stderr: { write: (c) => (stderr += c.toString()) },
    cwd: dir,
    env: {},
    interrupted: new Promise<void>((resolve) => (interrupt = resolve)),
  };
  const exited = main(args, io);
  if (untilServing) {
    await untilServing(await started);
    interrupt();
  }
  return { code: await exited, stdout, stderr };
}

describe('kiln storage', () => {
  it('serves its store until interrupted, with no Execution', async () => {
    const x = blob('kept by the node');
    const { code, stderr } = await run(['--storage', 'store', '--port', '0'], async (endpoint) => {
      expect(endpoint).toMatch(/^grpc:\/\/127\.0\.0\.1:\d+$/);
      const clients = connect(endpoint);
      try {
        await must(clients.cas, clients.cas.BatchUpdateBlobs, { requests: [{ digest: x.digest, data: x.data }] });
        const caps = await must(clients.caps, clients.caps.GetCapabilities, {});
        expect(caps.executionCapabilities?.execEnabled ?? false).toBe(false);
      } finally {
        clients.close();
      }
    });
    expect(code).toBe(0);
    expect(serverLogText(stderr)).toContain(`INFO: instance "" (default): CAS verifying(blocks ${join(dir, 'store')}/cas-blocks`);
    expect(parseServerLog(stderr).every((r) => r.role === 'storage')).toBe(true);
    expect(stderr).not.toContain('Execution');
  });

  it.each([
    [[], /^ERROR: give --config FILE/],
    [['--executors', '1'], /^ERROR: Unrecognized option: --executors/],
    [['--config', 'missing.json'], /^ERROR: --config: cannot read .*missing\.json: ENOENT/],
    [['--config', 'bad.json'], /^ERROR: bad\.json:1:13: not valid JSON/],
    [['--config', 'execution.json'], /^ERROR: execution\.json: execution: a storage node runs no actions/],
    [['--config', 'endpoint.json'], /^ERROR: endpoint\.json: instances\[""\]\.cas\.endpoint: ftp:\/\/node:1: unsupported scheme 'ftp'/],
  ])('refuses %j with exit 2 and a message naming the problem', async (args, message) => {
    const { code, stderr } = await run(args as string[]);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });
});
