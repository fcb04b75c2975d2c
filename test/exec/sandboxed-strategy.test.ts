import { createServer, type Server } from 'node:net';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Action } from '../../src/actions/index.js';
import { detectSandboxSupport, type SandboxSupport } from '../../src/core/sandbox/index.js';
import { executeActions, type ExecutionOptions, type StrategyName } from '../../src/exec/index.js';
import { genrule, makeWorkspace, out, RecordingReporter, source, type Workspace } from './fixtures.js';
import { needTool } from '../setup/need-tool.js';

// scripts/test-setup.d/10-bubblewrap.sh exports KILN_BWRAP through $KILN_TEST_ENV.
const bwrap = process.env.KILN_BWRAP ?? '';
const SETUP_HINT = 'KILN_BWRAP is not set: run scripts/test-setup.d/10-bubblewrap.sh (or `npm test`) to install bubblewrap';
const bwrapHere = needTool('bubblewrap', bwrap !== '', SETUP_HINT);

describe.skipIf(!bwrapHere).each([
  ['native', true],
  ['bubblewrap', false],
])('sandboxed strategy (%s)', (_name, nativeSandbox) => {
  let ws: Workspace;
  let support: SandboxSupport;
  let server: Server;
  let port: number;

  beforeAll(async () => {
    support = await detectSandboxSupport({ bwrapPath: bwrap });
    if (!support.available) throw new Error(`KILN_BWRAP=${bwrap} cannot sandbox here: ${support.reason}`);
    server = createServer((socket) => {
      socket.on('error', () => undefined); // probes close abruptly
      socket.end('pong\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(async () => {
    ws = await makeWorkspace();
  });
  afterEach(async () => {
    await ws.cleanup();
  });

  async function build(actions: Action[], strategy: StrategyName) {
    const reporter = new RecordingReporter();
    const options: ExecutionOptions = {
      execRoot: ws.execRoot,
      outputBase: ws.outputBase,
      clientEnv: { PATH: process.env.PATH },
      strategies: { spawnStrategy: [strategy] },
      sandbox: support,
      nativeSandbox,
    };
    const summary = await executeActions(actions, options, reporter);
    return { summary, reporter };
  }

  it('hides an undeclared input that the local strategy sees', async () => {
    await ws.write('p/declared.txt', 'declared\n');
    await ws.write('p/undeclared.txt', 'undeclared\n');
    const peek = genrule('//p:peek', { srcs: [source('p/declared.txt')], outs: ['o'], cmd: `cat p/declared.txt p/undeclared.txt > ${out('p', 'o')}` });

    // Sandboxed first: a failed action is not cached, so the local run below really runs.
    const sandboxed = await build([peek], 'sandboxed');
    expect(sandboxed.summary.success).toBe(false);
    expect(sandboxed.summary.failures[0]!.stderr?.toString()).toContain('p/undeclared.txt: No such file or directory');

    const local = await build([peek], 'local');
    expect(local.summary.success).toBe(true);
    expect(await ws.read(out('p', 'o'))).toBe('declared\nundeclared\n');
  });

  it('runs with declared inputs, moves declared outputs back, drops other writes, counts linux-sandbox', async () => {
    await ws.write('p/in.txt', 'in\n');
    const gen = genrule('//p:gen', {
      srcs: [source('p/in.txt')],
      outs: ['sub/o.txt'],
      cmd: `echo stray > stray.txt; (echo escape > ${ws.execRoot}/escaped.txt) 2>/dev/null || true; tr a-z A-Z < p/in.txt > ${out('p', 'sub/o.txt')}`,
    });
    const { summary } = await build([gen], 'sandboxed');
    expect(summary.success).toBe(true);
    expect(summary.processes['linux-sandbox']).toBe(1);
    expect(await ws.read(out('p', 'sub/o.txt'))).toBe('IN\n');
    await expect(stat(join(ws.execRoot, 'stray.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(stat(join(ws.execRoot, 'escaped.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('collects outputs from several directories, reads a sibling output among them, and drops stray files there', async () => {
    await ws.write('p/in.txt', 'in\n');
    const first = genrule('//p:first', { srcs: [source('p/in.txt')], outs: ['first.txt'], cmd: `cp p/in.txt ${out('p', 'first.txt')}` });
    const firstOut = first.outputs[0]!;
    const spread = genrule('//p:spread', {
      srcs: [firstOut],
      outs: ['a.txt', 'x/b.txt', 'x/y/c.txt'],
      cmd: [
        `cat ${firstOut.execPath} > ${out('p', 'a.txt')}`,
        `echo b > ${out('p', 'x/b.txt')}`,
        `echo c > ${out('p', 'x/y/c.txt')}`,
        `echo stray > ${out('p', 'stray.txt')}`,
        'echo tmp > $TMPDIR/t',
      ].join('; '),
    });
    const { summary } = await build([first, spread], 'sandboxed');
    expect(summary.success, JSON.stringify(summary.failures)).toBe(true);
    expect([await ws.read(out('p', 'a.txt')), await ws.read(out('p', 'x/b.txt')), await ws.read(out('p', 'x/y/c.txt'))]).toEqual(['in\n', 'b\n', 'c\n']);
    await expect(stat(join(ws.execRoot, out('p', 'stray.txt')))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('runs an action with more inputs than bwrap takes as arguments (for bwrap, its execroot is built on the host)', async () => {
    const inputs = [];
    for (let i = 0; i < 2500; i++) {
      await ws.write(`many/f${i}.txt`, `${i}\n`);
      inputs.push(source(`many/f${i}.txt`));
    }
    await ws.write('many/undeclared.txt', 'no\n');
    const count = genrule('//many:count', {
      srcs: inputs,
      outs: ['n.txt'],
      cmd: `cat many/f*.txt | wc -l > ${out('many', 'n.txt')}; test ! -e many/undeclared.txt`,
    });
    const { summary } = await build([count], 'sandboxed');
    expect(summary.success, JSON.stringify(summary.failures)).toBe(true);
    expect((await ws.read(out('many', 'n.txt'))).trim()).toBe('2500');
  });

  it('has no network; an action tagged requires-network runs locally', async () => {
    const probe = (name: string, requirements: Action['executionRequirements'] = []) =>
      genrule(`//p:${name}`, {
        outs: [`${name}.txt`],
        cmd: `if (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null; then echo connected; else echo refused; fi > ${out('p', `${name}.txt`)}`,
        requirements,
      });
    expect((await build([probe('local')], 'local')).summary.success).toBe(true);
    expect(await ws.read(out('p', 'local.txt'))).toBe('connected\n');
    expect((await build([probe('sandboxed')], 'sandboxed')).summary.success).toBe(true);
    expect(await ws.read(out('p', 'sandboxed.txt'))).toBe('refused\n');
    const net = await build([probe('net', ['requires-network'])], 'sandboxed');
    expect(net.summary.processes.local).toBe(1);
    expect(await ws.read(out('p', 'net.txt'))).toBe('connected\n');
  });
});
