import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { needTool } from '../setup/need-tool.js';
import { E2eWorkspace, tempDir } from './e2e-workspace.js';

const REPO = join(import.meta.dirname, '../..');
const BINARY = join(REPO, 'bin/kiln');
const BUILT = existsSync(join(REPO, 'dist/bundle/kiln.js'));
const RUN_BINARY = needTool('the built kiln (dist/)', BUILT, 'npm run build');

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

function workspace(): E2eWorkspace {
  return new E2eWorkspace({ WORKSPACE: '', 'pkg/BUILD': 'genrule(name = "g", outs = ["g.txt"], cmd = "echo hi > $@")\n' });
}

function kiln(ws: E2eWorkspace, args: string[]) {
  // A Kiln that spins (the bug this guards against) is killed, and the test sees a null status.
  return spawnSync(BINARY, args, { cwd: ws.root, env: { HOME: ws.home, PATH: process.env.PATH }, encoding: 'utf8', timeout: 20_000, killSignal: 'SIGKILL' });
}

describe('directory flags are checked up front (the built binary)', () => {
  it.skipIf(!RUN_BINARY)(
    'an unusable --disk_cache or --output_base is one error naming the flag and the reason, exit 2',
    () => {
      const ws = workspace();
      const file = join(tempDir(), 'a-file');
      writeFileSync(file, '');
      const cases: [string[], string][] = [
        [
          ['--disk_cache=/proc/kiln-no-such-dir'],
          'ERROR: --disk_cache=/proc/kiln-no-such-dir: cannot create the directory /proc/kiln-no-such-dir: no such file or directory',
        ],
        [[`--disk_cache=${file}/cache`], `ERROR: --disk_cache=${file}/cache: ${file} is not a directory`],
        [['--disk_cache=/proc'], 'ERROR: --disk_cache=/proc: cannot write in /proc: '],
        [[`--output_base=${file}`], `ERROR: --output_base=${file}: ${file} is not a directory`],
        [
          ['--output_base=/proc/kiln-no-such-dir/base'],
          'ERROR: --output_base=/proc/kiln-no-such-dir/base: cannot create the directory /proc/kiln-no-such-dir: no such file or directory',
        ],
        [['--output_base=/proc'], 'ERROR: --output_base=/proc: cannot write in /proc: '],
      ];
      for (const [flags, message] of cases) {
        const run = kiln(ws, ['build', ...flags, '//pkg:g']);
        expect(run.status, `${flags.join(' ')}: ${run.stderr}`).toBe(2);
        expect(run.stderr.startsWith(message), run.stderr).toBe(true);
        expect(run.stderr.trim().split('\n')).toHaveLength(1);
      }
      // As a startup option too, and for clean.
      const startup = spawnSync(BINARY, [`--output_base=${file}`, 'clean'], {
        cwd: ws.root,
        env: { HOME: ws.home, PATH: process.env.PATH },
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(startup.status).toBe(2);
      expect(startup.stderr).toBe(`ERROR: --output_base=${file}: ${file} is not a directory\n`);
    },
    120_000,
  );
});

/** Starts `kiln ARGS` and resolves once its stderr (or, with `readyOn: 'stdout'`, its stdout) shows `ready`. */
async function startKiln(ws: E2eWorkspace, args: string[], ready: string, readyOn: 'stderr' | 'stdout' = 'stderr') {
  const child = spawn(BINARY, args, { cwd: ws.root, env: { HOME: ws.home, PATH: process.env.PATH } });
  started.push(child);
  const seen = { stderr: '', stdout: '' };
  // 'close', not 'exit': by then both streams have been read to their end.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, at: performance.now() })),
  );
  await new Promise<void>((resolve, reject) => {
    for (const stream of ['stderr', 'stdout'] as const) {
      child[stream].on('data', (c: Buffer) => {
        seen[stream] += c.toString();
        if (stream === readyOn && seen[stream].includes(ready)) resolve();
      });
    }
    void exited.then(() => reject(new Error(`kiln exited before '${ready}':\n${seen.stderr}`)));
  });
  return { child, exited, stderr: () => seen.stderr };
}

describe('an interrupt ends the built binary within two seconds', () => {
  it.skipIf(!RUN_BINARY)(
    "SIGTERM while an action runs, and while waiting for another command's output base",
    async () => {
      const marker = `kiln-interrupt-${process.pid}-${Date.now()}`;
      const ws = new E2eWorkspace({
        WORKSPACE: '',
        'pkg/BUILD': `genrule(name = "slow", outs = ["slow.txt"], cmd = "echo started >&2; exec -a ${marker} sleep 60")\n`,
      });
      const first = await startKiln(ws, ['build', '--spawn_strategy=local', '//pkg:slow'], 'Executing genrule //pkg:slow');
      const second = await startKiln(ws, ['build', '--spawn_strategy=local', '//pkg:slow'], 'is using the output base');

      let sentAt = performance.now();
      second.child.kill('SIGTERM');
      let end = await second.exited;
      expect(end.code, second.stderr()).toBe(8);
      expect(end.at - sentAt).toBeLessThan(2000);

      // The action's process must be running when the signal comes.
      for (let i = 0; i < 200 && spawnSync('pgrep', ['-f', marker]).status !== 0; i++) await new Promise((r) => setTimeout(r, 25));
      sentAt = performance.now();
      first.child.kill('SIGTERM');
      end = await first.exited;
      expect(end.code, first.stderr()).toBe(8);
      expect(end.at - sentAt).toBeLessThan(2000);
      expect(first.stderr()).toContain('Executing genrule //pkg:slow interrupted');
      expect(spawnSync('pgrep', ['-f', marker]).stdout.toString()).toBe('');
    },
    60_000,
  );
});

/** A loop the evaluator would run for days: a signal has to stop it. */
const ENDLESS_LOOP = 'def spin():\n    for _ in range(1000000000000):\n        pass\n';

describe('a signal stops Starlark evaluation that never ends (the built binary)', () => {
  // Loading evaluates the .bzl file: its print() is the DEBUG line that says the loop has started.
  const looping = () =>
    new E2eWorkspace({ WORKSPACE: '', 'pkg/loop.bzl': `${ENDLESS_LOOP}print("looping")\nspin()\n`, 'pkg/BUILD': 'load(":loop.bzl", "spin")\n' });
  const commands = [
    { args: ['build', '//pkg:all'], words: ['ERROR: build interrupted', 'ERROR: Build did NOT complete successfully'] },
    { args: ['query', '//pkg:all'], words: ['ERROR: query interrupted'] },
  ];

  for (const { args, words } of commands) {
    it.skipIf(!RUN_BINARY)(
      `kiln ${args[0]}: SIGINT ends it with Bazel's exit code 8 and words`,
      async () => {
        const kiln = await startKiln(looping(), args, 'DEBUG: pkg/loop.bzl:4:1: looping');
        const sentAt = performance.now();
        kiln.child.kill('SIGINT');
        const end = await kiln.exited;
        expect(end.code, kiln.stderr()).toBe(8);
        for (const line of words) expect(kiln.stderr()).toContain(`${line}\n`);
        // A generous bound: before the fix the process never ended (the test's SIGKILL did).
        expect(end.at - sentAt).toBeLessThan(10_000);
      },
      30_000,
    );

    it.skipIf(!RUN_BINARY)(
      `kiln ${args[0]}: SIGTERM ends it as SIGINT does, exit code 8`,
      async () => {
        // Bazel's client cancels the command on SIGTERM as on Ctrl-C; Kiln's relay thread turns it
        // into SIGINT for the watchdog that stops evaluation (sigterm-relay.ts).
        const kiln = await startKiln(looping(), args, 'DEBUG: pkg/loop.bzl:4:1: looping');
        const sentAt = performance.now();
        kiln.child.kill('SIGTERM');
        const end = await kiln.exited;
        expect(end.code, kiln.stderr()).toBe(8);
        for (const line of words) expect(kiln.stderr()).toContain(`${line}\n`);
        expect(end.at - sentAt).toBeLessThan(10_000);
      },
      30_000,
    );
  }

  it.skipIf(!RUN_BINARY)(
    'kiln starlark: SIGINT ends a `while True` loop with exit code 8, and what it printed is written',
    async () => {
      // print() output is buffered up to 64 KiB: a long line reaches the pipe before the loop starts.
      const ws = new E2eWorkspace({ 'spin.star': 'print("looping" + "." * 70000)\nwhile True:\n    pass\n' });
      const kiln = await startKiln(ws, ['starlark', '--option=while', '--option=toplevelcontrol', 'spin.star'], 'looping', 'stdout');
      kiln.child.kill('SIGINT');
      const end = await kiln.exited;
      expect(end.code, kiln.stderr()).toBe(8);
      expect(kiln.stderr()).toBe('ERROR: evaluation interrupted\n');
    },
    30_000,
  );
});
