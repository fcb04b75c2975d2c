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
  it.skipIf(!RUN_BINARY)('an unusable --disk_cache or --output_base is one error naming the flag and the reason, exit 2', () => {
    const ws = workspace();
    const file = join(tempDir(), 'a-file');
    writeFileSync(file, '');
    const cases: [string[], string][] = [
      [['--disk_cache=/proc/kiln-no-such-dir'], 'ERROR: --disk_cache=/proc/kiln-no-such-dir: cannot create the directory /proc/kiln-no-such-dir: no such file or directory'],
      [[`--disk_cache=${file}/cache`], `ERROR: --disk_cache=${file}/cache: ${file} is not a directory`],
      [['--disk_cache=/proc'], 'ERROR: --disk_cache=/proc: cannot write in /proc: '],
      [[`--output_base=${file}`], `ERROR: --output_base=${file}: ${file} is not a directory`],
      [['--output_base=/proc/kiln-no-such-dir/base'], 'ERROR: --output_base=/proc/kiln-no-such-dir/base: cannot create the directory /proc/kiln-no-such-dir: no such file or directory'],
      [['--output_base=/proc'], 'ERROR: --output_base=/proc: cannot write in /proc: '],
    ];
    for (const [flags, message] of cases) {
      const run = kiln(ws, ['build', ...flags, '//pkg:g']);
      expect(run.status, `${flags.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr.startsWith(message), run.stderr).toBe(true);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
    }
    // As a startup option too, and for clean.
    const startup = spawnSync(BINARY, [`--output_base=${file}`, 'clean'], { cwd: ws.root, env: { HOME: ws.home, PATH: process.env.PATH }, encoding: 'utf8', timeout: 20_000 });
    expect(startup.status).toBe(2);
    expect(startup.stderr).toBe(`ERROR: --output_base=${file}: ${file} is not a directory\n`);
  }, 120_000);
});

/** Starts `kiln ARGS` and resolves once its stderr shows `ready`. */
async function startKiln(ws: E2eWorkspace, args: string[], ready: string) {
  const child = spawn(BINARY, args, { cwd: ws.root, env: { HOME: ws.home, PATH: process.env.PATH } });
  started.push(child);
  let stderr = '';
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.on('exit', (code) => resolve({ code, at: performance.now() })));
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
      if (stderr.includes(ready)) resolve();
    });
    void exited.then(() => reject(new Error(`kiln exited before '${ready}':\n${stderr}`)));
  });
  return { child, exited, stderr: () => stderr };
}

describe('an interrupt ends the built binary within two seconds', () => {
  it.skipIf(!RUN_BINARY)('SIGTERM while an action runs, and while waiting for another command\'s output base', async () => {
    const marker = `kiln-interrupt-${process.pid}-${Date.now()}`;
    const ws = new E2eWorkspace({ WORKSPACE: '', 'pkg/BUILD': `genrule(name = "slow", outs = ["slow.txt"], cmd = "echo started >&2; exec -a ${marker} sleep 60")\n` });
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
  }, 60_000);
});
