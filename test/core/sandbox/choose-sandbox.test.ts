import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { chmod, chown } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseSandbox, detectSandboxSupport, nativeSpawnerBinary, type ProcessSpec, type SandboxChoice } from '../../../src/core/sandbox/index.js';
import { needTool } from '../../setup/need-tool.js';

const NOBODY = { uid: 65534, gid: 65534 };
const asRoot = process.getuid?.() === 0;
const nativeHere = nativeSpawnerBinary() !== undefined;
const bwrapHere = (await detectSandboxSupport()).available;

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kiln-choose-sandbox-'));
  // Reachable and writable by nobody, as the executor makes its build directories.
  await chmod(dir, 0o755);
  if (asRoot) await chown(dir, NOBODY.uid, NOBODY.gid);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const idSpec = (): ProcessSpec => ({
  argv: ['bash', '-c', 'id -u; touch made'],
  cwd: dir,
  env: { PATH: '/usr/bin:/bin' },
  stdout: { kind: 'buffer', limitBytes: 1 << 16 },
  stderr: { kind: 'buffer', limitBytes: 1 << 16 },
});

async function withChoice<T>(choice: SandboxChoice, use: (c: Extract<SandboxChoice, { available: true }>) => Promise<T>): Promise<T> {
  if (!choice.available) throw new Error(`no sandbox: ${choice.reason}`);
  try {
    return await use(choice);
  } finally {
    await choice.close();
  }
}

describe('chooseSandbox', () => {
  if (needTool('the native sandbox', nativeHere, 'kiln-spawn is not built (npm run build with a C compiler)')) {
    it('prefers the native sandbox, for builds and executors alike', async () => {
      await withChoice(await chooseSandbox(), async (c) => expect(c.kind).toBe('native'));
      await withChoice(await chooseSandbox({ hostUser: NOBODY, networkPerRun: true }), async (c) => expect(c.kind).toBe('native'));
    });

    it.runIf(needTool('root', asRoot, 'run the tests as root', { optional: 'executor/README.md: an executor runs as root or as another user' }))(
      "runs a root caller's processes as its hostUser in the native sandbox, which then owns what they make",
      async () => {
        await withChoice(await chooseSandbox({ hostUser: NOBODY }), async (c) => {
          expect(c.actionUser).toBe('separate');
          const r = await c.runner.run(idSpec());
          expect(r.stderr.toString()).toBe('');
          expect(r.stdout.toString()).toBe('65534\n');
          expect(statSync(join(dir, 'made')).uid).toBe(65534);
        });
      },
    );
  }

  if (needTool('bubblewrap', bwrapHere, 'run scripts/test-setup.d/10-bubblewrap.sh')) {
    it('falls back to bubblewrap, with the same user for a root caller', async () => {
      await withChoice(await chooseSandbox({ native: false, hostUser: NOBODY, networkPerRun: true }), async (c) => {
        expect(c.kind).toBe('bubblewrap');
        expect(c.bwrapPath).toBeDefined();
        const r = await c.runner.run(idSpec());
        expect(r.exitCode).toBe(0);
        if (asRoot && c.actionUser === 'separate') expect(r.stdout.toString()).toBe('65534\n');
      });
    });
  }

  it('says why when neither sandbox can run', async () => {
    const choice = await chooseSandbox({ native: false, knownSupport: { available: false, reason: 'bwrap is not here' } });
    expect(choice).toEqual({ available: false, reason: 'bwrap is not here' });
  });
});
