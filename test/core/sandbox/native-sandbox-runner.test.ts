import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { NativeSandboxRunner, NativeSpawner, nativeSpawnerBinary, type ProcessSpec } from '../../../src/core/sandbox/index.js';
import { processRunnerCases } from './process-runner-cases.js';
import { sandboxRunnerCases } from './sandbox-runner-cases.js';
import { needTool } from '../../setup/need-tool.js';

const started = nativeSpawnerBinary() ? await NativeSandboxRunner.start() : { reason: 'kiln-spawn is not built (npm run build)' };
needTool('the native sandbox', started instanceof NativeSandboxRunner, started instanceof NativeSandboxRunner ? '' : started.reason);
const runner = started instanceof NativeSandboxRunner ? started : undefined;
afterAll(() => runner?.close());

describe.skipIf(!runner)('NativeSandboxRunner', () => {
  processRunnerCases(() => runner!);
  // One helper serves every case; the /etc case gets the runner's own prepared /etc.
  sandboxRunnerCases(() => runner!);

  const spec = (script: string): ProcessSpec => ({
    argv: ['bash', '-c', script],
    // A working directory made inside: nothing of the host is writable.
    cwd: '/work',
    tree: { mounts: [], dirs: ['/work'], symlinks: [] },
    env: { PATH: '/usr/bin:/bin' },
    stdout: { kind: 'buffer', limitBytes: 1 << 16 },
    stderr: { kind: 'buffer', limitBytes: 1 << 16 },
  });

  // bwrap reports the exit as soon as the command ends; what the command left dies with its pid 1 just after.
  it('ends every process inside before it reports the exit, even one that left its process group', async () => {
    const marker = `31.${process.pid}${Date.now() % 1000}`;
    const r = await runner!.run(spec(`setsid sleep ${marker} >/dev/null 2>&1 < /dev/null & echo started`));
    expect(r.stdout.toString()).toBe('started\n');
    const left = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes(marker));
    expect(left).toEqual([]);
  });

  it('says which step failed when a declared path does not exist, naming it', async () => {
    const r = await runner!.run({ ...spec('true'), readOnlyPaths: ['/no/such/kiln/input'] });
    expect(r.exitCode).toBe(1);
    expect(r.stderr.toString()).toBe('kiln-sandbox: cannot find /no/such/kiln/input: No such file or directory\n');
  });

  it('reports a command killed by a signal as bwrap does, 128 + the signal', async () => {
    const r = await runner!.run(spec('kill -TERM $$'));
    expect(r.exitCode).toBe(128 + 15);
  });

  it('runs many sandboxes at once, each with its own /tmp', async () => {
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) => runner!.run(spec(`test -z "$(ls /tmp)" && echo ${i} > /tmp/mine && sleep 0.05 && cat /tmp/mine`))),
    );
    expect(results.map((r) => r.stdout.toString())).toEqual(Array.from({ length: 16 }, (_, i) => `${i}\n`));
  });
});

describe.skipIf(!nativeSpawnerBinary())('the native sandbox helper', () => {
  it('says why it cannot start, and ends', async () => {
    const spawner = new NativeSpawner(nativeSpawnerBinary()!, { sandboxBase: '/no/such/kiln/base' });
    expect(await spawner.started()).toBe(false);
    expect(spawner.startFailure).toBe('cannot mount a tmpfs at /no/such/kiln/base: No such file or directory');
    await spawner.close();
  });

  it('refuses a sandboxed run from a helper started without --sandbox', async () => {
    const plain = new NativeSpawner(nativeSpawnerBinary()!);
    const r = await plain.run({ argv: ['true'], cwd: '/', env: {}, sandbox: [], stderr: { kind: 'buffer', limitBytes: 1024 } });
    expect(r.exitCode).toBe(127);
    expect(r.stderr.toString()).toBe("kiln: cannot run 'true' in /: EPERM\n");
    await plain.close();
  });
});
