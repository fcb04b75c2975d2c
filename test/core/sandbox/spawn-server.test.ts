import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createServer, type AddressInfo } from 'node:net';
import { BubblewrapProcessRunner, detectSandboxSupport, isolatedNetworkWrapper, LocalProcessRunner, SpawnServer } from '../../../src/core/sandbox/index.js';
import { processRunnerCases } from './process-runner-cases.js';
import { needTool } from '../../setup/need-tool.js';

const server = new SpawnServer();
const support = await detectSandboxSupport({ env: process.env });
afterAll(() => server.close());

describe('SpawnServer', () => {
  it('runs processes from its own helper process (needs the build: npm run build)', () => {
    expect(server.outOfProcess).toBe(true);
  });

  // Every behaviour of the in-process runner holds through the server: exit codes, signals,
  // timeouts, aborts, captured and truncated output, file sinks, the exact environment.
  processRunnerCases(() => new LocalProcessRunner(server.run));

  it('starts the process from the helper, not from Kiln', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiln-spawn-server-'));
    try {
      const r = await server.run({ argv: ['sh', '-c', 'echo $PPID'], cwd: dir, env: { PATH: '/usr/bin:/bin' }, stdout: { kind: 'buffer', limitBytes: 100 } });
      expect(r.exitCode).toBe(0);
      const parent = Number(r.stdout.toString().trim());
      expect(parent).toBeGreaterThan(0);
      expect(parent).not.toBe(process.pid);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails pending runs when closed, and starts afresh on the next run', async () => {
    const own = new SpawnServer();
    const dir = mkdtempSync(join(tmpdir(), 'kiln-spawn-server-'));
    try {
      const pending = own.run({ argv: ['sleep', '5'], cwd: dir, env: { PATH: '/usr/bin:/bin' } });
      const closing = own.close();
      await expect(pending).rejects.toThrow(/closed/);
      await closing;
      const again = await own.run({ argv: ['true'], cwd: dir, env: { PATH: '/usr/bin:/bin' } });
      expect(again.exitCode).toBe(0);
    } finally {
      await own.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SpawnServer under isolatedNetworkWrapper', () => {
  const bwrapPath = support.available ? support.bwrapPath : '';
  const howToGet = `${support.available ? '' : support.reason} (run scripts/test-setup.d/10-bubblewrap.sh)`;
  if (!needTool('bubblewrap', bwrapPath !== '', howToGet)) return;

  it('starts sandboxes that share its empty network namespace', async () => {
    const isolated = new SpawnServer({ wrapper: isolatedNetworkWrapper(bwrapPath) });
    const host = createServer();
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    const port = (host.address() as AddressInfo).port;
    const dir = mkdtempSync(join(tmpdir(), 'kiln-spawn-server-'));
    try {
      expect(await isolated.started()).toBe(true);
      const probe = `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo online || echo offline`;
      const spec = { argv: ['bash', '-c', probe], cwd: dir, env: { PATH: '/usr/bin:/bin' }, stdout: { kind: 'buffer' as const, limitBytes: 100 } };
      const sandboxed = await new BubblewrapProcessRunner({ bwrapPath, spawn: isolated.run, inIsolatedNetwork: true }).run(spec);
      expect(sandboxed.stdout.toString()).toBe('offline\n');
      // The server itself has no network either; the plain server's processes have the host's.
      expect((await isolated.run(spec)).stdout.toString()).toBe('offline\n');
      expect((await server.run(spec)).stdout.toString()).toBe('online\n');
    } finally {
      await Promise.all([isolated.close(), host.close()]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
