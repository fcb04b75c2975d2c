import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalProcessRunner, SpawnServer } from '../../../src/core/index.js';
import { processRunnerCases } from './process-runner-cases.js';

const server = new SpawnServer();
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
      own.close();
      await expect(pending).rejects.toThrow(/closed/);
      const again = await own.run({ argv: ['true'], cwd: dir, env: { PATH: '/usr/bin:/bin' } });
      expect(again.exitCode).toBe(0);
    } finally {
      own.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
