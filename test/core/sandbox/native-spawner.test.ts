import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalProcessRunner, NativeSpawner, nativeSpawnerBinary } from '../../../src/core/sandbox/index.js';
import { processRunnerCases } from './process-runner-cases.js';
import { needTool } from '../../setup/need-tool.js';

// `npm run build` compiles the helper when a C compiler is present (scripts/build-native.mjs).
const binary = nativeSpawnerBinary();
needTool('the native process starter (kiln-spawn)', binary !== undefined, 'npm run build compiles it when a C compiler (cc) is present');
const PATH = '/usr/bin:/bin';

describe.skipIf(!binary)('NativeSpawner', () => {
  const spawner = new NativeSpawner(binary ?? '');
  afterAll(() => spawner.close());
  let dir: string;
  beforeEach(() => void (dir = mkdtempSync(join(tmpdir(), 'kiln-native-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // Every behaviour of the in-process runner: exit codes, environment, working directory, captured,
  // truncated and file output, timeouts and aborts killing the whole group, background processes.
  processRunnerCases(() => new LocalProcessRunner(spawner.run));

  it('ends with 127 and the reason on stderr when the program or the directory is missing, as a shell does', async () => {
    const missing = await spawner.run({ argv: ['no-such-program'], cwd: dir, env: { PATH }, stderr: { kind: 'buffer', limitBytes: 1000 } });
    expect(missing).toMatchObject({ exitCode: 127, signal: null });
    expect(missing.stderr.toString()).toBe(`kiln: cannot run 'no-such-program' in ${dir}: ENOENT\n`);
    const noDir = await spawner.run({ argv: ['/bin/true'], cwd: join(dir, 'absent'), env: { PATH }, stderr: { kind: 'buffer', limitBytes: 1000 } });
    expect(noDir.exitCode).toBe(127);
    expect(noDir.stderr.toString()).toContain('ENOENT');
  });

  it('passes requests larger than the pipe holds whole and in order, even many at once', async () => {
    // 300 KB of environment each (in variables under Linux's 128 KiB limit per string): more than
    // the helper's socket takes at once, so part of a request waits in the stream.
    const big = (i: number) => String.fromCharCode(97 + i).repeat(100_000 + i);
    const runs = Array.from({ length: 8 }, (_, i) =>
      spawner.run({
        argv: ['bash', '-c', 'printf "%s %s %s" "${#A}${#B}${#C}" "${A:0:1}" "${C: -1}"'],
        cwd: dir,
        env: { PATH, A: big(i), B: big(i), C: big(i) },
        stdout: { kind: 'buffer', limitBytes: 1000 },
      }),
    );
    const results = await Promise.all(runs);
    const expected = (i: number) => `${String(100_000 + i).repeat(3)} ${String.fromCharCode(97 + i)} ${String.fromCharCode(97 + i)}`;
    expect(results.map((r) => r.stdout.toString())).toEqual(Array.from({ length: 8 }, (_, i) => expected(i)));
  });

  it('keeps every byte of many concurrent chatty processes apart, and spills a large stream whole', async () => {
    const runs = Array.from({ length: 24 }, (_, i) =>
      spawner.run({
        argv: ['bash', '-c', `head -c ${100_000 + i} /dev/zero | tr '\\0' ${String.fromCharCode(97 + i)}; echo done${i} >&2`],
        cwd: dir,
        env: { PATH },
        stdout: { kind: 'buffer', limitBytes: 1 << 20 },
        stderr: { kind: 'buffer', limitBytes: 1000 },
      }),
    );
    const results = await Promise.all(runs);
    results.forEach((r, i) => {
      expect(r.exitCode).toBe(0);
      expect(r.stdout.length).toBe(100_000 + i);
      expect(r.stdout.every((b) => b === 97 + i)).toBe(true);
      expect(r.stderr.toString()).toBe(`done${i}\n`);
    });
    const spillPath = join(dir, 'spill.txt');
    const spilled = await spawner.run({
      argv: ['head', '-c', '300000', '/dev/zero'],
      cwd: dir,
      env: { PATH },
      stdout: { kind: 'spill', memoryBytes: 1000, path: spillPath },
    });
    expect(spilled.stdoutSpilled).toBe(true);
    expect(readFileSync(spillPath).length).toBe(300_000);
  });

  it('fails runs, instead of hanging, when the helper cannot start', async () => {
    const broken = new NativeSpawner(join(dir, 'no-such-helper'));
    expect(await broken.started()).toBe(false);
    await expect(broken.run({ argv: ['true'], cwd: dir, env: { PATH } })).rejects.toThrow(/native spawner could not run/);
    await broken.close();
  });

  it('starts processes from the helper, fails pending runs when closed, and starts afresh after', async () => {
    const own = new NativeSpawner(binary ?? '');
    try {
      const parent = await own.run({ argv: ['sh', '-c', 'echo $PPID'], cwd: dir, env: { PATH }, stdout: { kind: 'buffer', limitBytes: 100 } });
      expect(Number(parent.stdout.toString())).not.toBe(process.pid);
      const pending = expect(own.run({ argv: ['sleep', '5'], cwd: dir, env: { PATH } })).rejects.toThrow(/closed/);
      await own.close();
      await pending;
      expect((await own.run({ argv: ['true'], cwd: dir, env: { PATH } })).exitCode).toBe(0);
    } finally {
      await own.close();
    }
  });
});
