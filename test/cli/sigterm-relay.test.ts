import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { needTool } from '../setup/need-tool.js';

const BUNDLE = join(import.meta.dirname, '../../dist/bundle/kiln.js');
const BUILT = needTool('the built kiln (dist/)', existsSync(BUNDLE), 'npm run build');

/**
 * A process that starts the relay in MODE, says `ready` once the relay's thread takes SIGTERM,
 * then spins on the main thread, as evaluation of an endless loop does: no listener can run.
 * In `break` mode it spins inside a script that breaks on SIGINT, as sigint-breakable.ts runs a
 * phase, and exits 8 when it is broken.
 */
const SPINNER = `
import { writeSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
const { startSigtermRelay } = await import(process.env.BUNDLE);
const relay = startSigtermRelay();
relay.setMode(process.env.MODE);
// The relay's thread never keeps a process alive: a timer does, until it is ready.
const alive = setInterval(() => {}, 1000);
await relay.ready;
clearInterval(alive);
// 'ready' is written from inside the spinning script, so the signal comes while it runs.
const spin = 'ready(); for (;;) {}';
const ready = () => writeSync(1, 'ready\\n');
if (process.env.MODE === 'break') {
  try { runInNewContext(spin, { ready }, { breakOnSigint: true }); } catch { process.exit(8); }
} else {
  runInNewContext(spin, { ready });
}
`;

function spin(mode: 'default' | 'break') {
  const child = spawn(process.execPath, ['--input-type=module', '-e', SPINNER], { env: { ...process.env, BUNDLE, MODE: mode } });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const ready = new Promise<void>((resolve) => child.stdout.on('data', (c: Buffer) => c.toString().includes('ready') && resolve()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return { child, ready, exited, stderr: () => stderr };
}

describe('the SIGTERM relay (sigterm-relay.ts)', () => {
  it.skipIf(!BUILT)(
    'turns SIGTERM into the SIGINT that breaks a running phase',
    async () => {
      const p = spin('break');
      await p.ready;
      p.child.kill('SIGTERM');
      expect(await p.exited, p.stderr()).toEqual({ code: 8, signal: null });
      expect(p.stderr()).toBe('');
    },
    20_000,
  );

  it.skipIf(!BUILT)(
    'leaves SIGTERM its default action when nobody listens and no phase runs',
    async () => {
      const p = spin('default');
      await p.ready;
      p.child.kill('SIGTERM');
      expect(await p.exited, p.stderr()).toEqual({ code: null, signal: 'SIGTERM' });
    },
    20_000,
  );
});
