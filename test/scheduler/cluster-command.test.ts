import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/commands/cluster.js';
import type { CliIO } from '../../src/cli/io.js';
import { blob, connect, must } from './cache-server-fixture.js';
import { scrape, valueOf } from './metrics-fixture.js';
import { until } from '../setup/until.js';
import { parseServerLog, serverLogText } from '../setup/server-log.js';

/** An in-memory CliIO whose interrupt the test triggers, and a promise for the first stdout line. */
function fakeIO(cwd: string) {
  let out = '';
  let err = '';
  let interrupt: () => void = () => undefined;
  let onLine: (line: string) => void = () => undefined;
  const firstLine = new Promise<string>((resolve) => (onLine = resolve));
  const io: CliIO = {
    stdout: {
      write: (c: string | Uint8Array) => {
        out += c.toString();
        if (out.includes('\n')) onLine(out.slice(0, out.indexOf('\n')));
      },
    },
    stderr: { write: (c: string | Uint8Array) => (err += c.toString()) },
    cwd,
    env: {},
    interrupted: new Promise<void>((resolve) => (interrupt = resolve)),
  };
  return { io, firstLine, interrupt: () => interrupt(), out: () => out, err: () => err, log: () => serverLogText(err) };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-cluster-cmd-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('kiln cluster up', () => {
  it('serves the cache until interrupted, printing its endpoint first and what it serves on stderr', async () => {
    const f = fakeIO(dir);
    const exit = main(['up', '--executors', '0', '--port=0', '--storage', 'store'], f.io);
    const endpoint = await f.firstLine;
    expect(endpoint).toMatch(/^grpc:\/\/127\.0\.0\.1:\d+$/);
    const clients = connect(endpoint);
    const b = blob('through the CLI');
    await must(clients.cas, clients.cas.BatchUpdateBlobs, { requests: [{ digest: b.digest, data: b.data }] });
    clients.close();
    f.interrupt();
    expect(await exit).toBe(0);
    expect(f.log()).toContain('INFO: services: build.bazel.remote.execution.v2.Capabilities, build.bazel.remote.execution.v2.ContentAddressableStorage');
    expect(f.log()).toContain(`blocks ${join(dir, 'store')}/cas-blocks`);
    expect(f.log()).toContain('INFO: interrupted: shutting down');
    expect(parseServerLog(f.err()).every((r) => r.role === 'cluster')).toBe(true);
  });

  it('prints the metrics URL after its endpoint line with "metricsPort", and its executors report there', async () => {
    await writeFile(join(dir, 'metrics.json'), JSON.stringify({ metricsPort: 0 }));
    const f = fakeIO(dir);
    const exit = main(['up', '--config', 'metrics.json', '--executors', '1', '--slots', '1', '--runner', 'local'], f.io);
    try {
      await until(() => f.out().split('\n').length >= 3, 'two stdout lines');
      const [endpoint, url] = f.out().split('\n');
      expect(endpoint).toMatch(/^grpc:\/\/127\.0\.0\.1:\d+$/);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      await until(async () => valueOf(await scrape(url!), 'kiln_scheduler_workers', { state: 'idle' }) === 1, 'the executor registered');
      const samples = await scrape(url!);
      expect(valueOf(samples, 'kiln_executor_actions_in_flight', { worker: 'executor-0' })).toBe(0);
      // Its first Synchronize is held (a long poll): started, not yet handled.
      expect(valueOf(samples, 'kiln_grpc_server_started_total', { grpc_service: 'kiln.worker.v1.WorkerService', grpc_method: 'Synchronize' })).toBeGreaterThan(
        0,
      );
    } finally {
      f.interrupt();
    }
    expect(await exit).toBe(0);
  });

  it('reads a JSON config with instance names and limits', async () => {
    await writeFile(join(dir, 'cache.json'), JSON.stringify({ instanceNames: ['', 'ci'], limits: { maxBatchTotalSizeBytes: 1048576 } }));
    const f = fakeIO(dir);
    const exit = main(['up', '--config', 'cache.json'], f.io);
    const clients = connect(await f.firstLine);
    const caps = await must(clients.caps, clients.caps.GetCapabilities, { instanceName: 'ci' });
    expect(caps.cacheCapabilities?.maxBatchTotalSizeBytes).toBe(1048576);
    clients.close();
    f.interrupt();
    expect(await exit).toBe(0);
    expect(f.log()).toContain('INFO: instance "ci"');
  });

  it.each([
    // The one option parser's words, as Bazel's OptionsParser says them.
    [['up', '--executors', '2', '--runner', 'podman'], /While parsing option --runner podman: Not a valid runner: 'podman' \(should be local or docker\)/],
    [['up', '--port', 'eighty'], /While parsing option --port eighty: 'eighty' is not an int/],
    [['up', '--port', '70000'], /While parsing option --port 70000: Value '\(70000\)' must be at most 65535\./],
    [['up', '--frobnicate'], /Unrecognized option: --frobnicate/],
    [['up', '--storage'], /Expected value after --storage/],
    [['up', '--storage='], /--storage expects a directory/],
    [['down'], /unknown cluster subcommand 'down'/],
    [['up', '--config', 'nope.json'], /--config: cannot read .*nope\.json: ENOENT/],
  ])('exits 2 for %j naming the flag', async (args, message) => {
    const f = fakeIO(dir);
    expect(await main(args, f.io)).toBe(2);
    expect(f.err()).toMatch(message);
    expect(f.out()).toBe('');
  });

  it.each([
    ['{"limits": {"maxBatchTotalSizeBytes": -1}}', /bad\.json: limits\.maxBatchTotalSizeBytes: expected a positive integer, got -1/],
    ['{"instanceNames": ["ok", "a/blobs"]}', /bad\.json: instanceNames\[1\]: .*reserved segment "blobs"/],
    ['{"storage": {"kind": "tape"}}', /bad\.json: storage\.kind: expected one of "memory", "disk", "blocks", got "tape"/],
    ['{"instances": {"x": {"cas": {"kind": "memory"}, "actionCache": {"kind": "memory", "maxBytes": 1}}}}', /bad\.json: instances\["x"\]\.cas\.maxBytes/],
    ['{"chunking": {"avgChunkSizeBytes": 3000}}', /bad\.json: chunking\.avgChunkSizeBytes: must be a power of two/],
    ['{"port": "x"}', /bad\.json: port: expected an integer from 0 to 65535, got "x"/],
    ['{"colour": 1}', /bad\.json: colour: unknown field/],
    ['{"storage": {"kind": "disk", "path": ""}}', /bad\.json: storage\.path: expected a non-empty string, got ""/],
    [
      '{"execution": {"platformRules": {"OSFamily": "loose"}}}',
      /bad\.json: execution\.platformRules\.OSFamily: expected one of "exact", "minimum", "ignore", got "loose"/,
    ],
    ['{"execution": {"heartbeatIntervalMs": 1.5}}', /bad\.json: execution\.heartbeatIntervalMs: expected a non-negative integer, got 1\.5/],
    ['{"execution": {"colour": 1}}', /bad\.json: execution\.colour: unknown field \(allowed: heartbeatIntervalMs/],
    ['{not json', /bad\.json:1:2: not valid JSON/],
  ])('rejects the config %s naming the field', async (text, message) => {
    await writeFile(join(dir, 'bad.json'), text);
    const f = fakeIO(dir);
    expect(await main(['up', '--config', 'bad.json'], f.io)).toBe(2);
    expect(f.err()).toMatch(message);
  });
});

describe('kiln cluster service-account', () => {
  it('writes a private key file (mode 600) and the public key, prints the config entry, and never overwrites', async () => {
    const f = fakeIO(dir);
    expect(await main(['service-account', 'ci', 'ci@kiln.test', 'http://sched:8981/token', 'keys'], f.io)).toBe(0);
    const keyFile = JSON.parse(await readFile(join(dir, 'keys', 'ci.json'), 'utf8'));
    expect(keyFile).toMatchObject({ type: 'service_account', client_email: 'ci@kiln.test', token_uri: 'http://sched:8981/token' });
    expect(keyFile.private_key).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect((await stat(join(dir, 'keys', 'ci.json'))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(dir, 'keys', 'ci.pub.pem'), 'utf8')).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(JSON.parse(f.out())).toEqual({ ci: { email: 'ci@kiln.test', publicKey: join(dir, 'keys', 'ci.pub.pem') } });

    const again = fakeIO(dir);
    expect(await main(['service-account', 'ci', 'ci@kiln.test', 'http://sched:8981/token', 'keys'], again.io)).toBe(2);
    expect(again.err()).toContain('already holds a key of ci; not overwritten');
    const bad = fakeIO(dir);
    expect(await main(['service-account', '../x', 'e', 'http://s/token', 'keys'], bad.io)).toBe(2);
    expect(bad.err()).toContain("letters, digits, '.', '_' and '-' only");
  });
});
