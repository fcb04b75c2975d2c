import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ProcessRunner, ProcessSpec } from '../../../src/core/sandbox/index.js';

const PATH = '/usr/bin:/bin';

/** Behaviour every ProcessRunner shares; each runner's test file calls this. */
export function processRunnerCases(makeRunner: () => ProcessRunner): void {
  let dir: string;
  let runner: ProcessRunner;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kiln-runner-'));
    runner = makeRunner();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const spec = (argv: string[], extra: Partial<ProcessSpec> = {}): ProcessSpec => ({
    argv,
    cwd: dir,
    env: { PATH },
    stdout: { kind: 'buffer', limitBytes: 1 << 20 },
    stderr: { kind: 'buffer', limitBytes: 1 << 20 },
    ...extra,
  });

  it("joins the spec's cgroups before the command runs, and runs nothing when it cannot", async () => {
    // A plain file stands in for cgroup.procs: what the joiner writes there is a pid.
    const procs = join(dir, 'cgroup.procs');
    writeFileSync(procs, '');
    const joined = await runner.run(spec(['bash', '-c', 'echo ran'], { cgroups: [procs], writablePaths: [dir] }));
    expect(joined.exitCode).toBe(0);
    expect(joined.stdout.toString()).toBe('ran\n');
    expect(readFileSync(procs, 'utf8')).toMatch(/^[1-9]\d*\n$/);
    const refused = await runner.run(spec(['bash', '-c', 'touch ran'], { cgroups: [join(dir, 'missing', 'cgroup.procs')], writablePaths: [dir] }));
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr.toString()).toContain(join(dir, 'missing', 'cgroup.procs'));
    expect(existsSync(join(dir, 'ran'))).toBe(false);
  });

  it('reports exit codes', async () => {
    for (const code of [0, 1, 3, 255]) {
      const r = await runner.run(spec(['bash', '-c', `exit ${code}`]));
      expect(r).toMatchObject({ exitCode: code, signal: null, timedOut: false });
    }
  });

  it('passes exactly the given environment', async () => {
    const r = await runner.run(spec(['env'], { env: { PATH, ONE: '1', SPACED: 'a b  c' } }));
    expect(r.stdout.toString().split('\n').filter(Boolean).sort()).toEqual(['ONE=1', `PATH=${PATH}`, 'SPACED=a b  c']);
  });

  it('gives Bash and its children the same environment, PWD included (Bash sets it from its directory)', async () => {
    const printed = async (extra: Partial<ProcessSpec>) => (await runner.run(spec(['/bin/bash', '-c', 'env | grep -v "^_=" | sort'], extra))).stdout.toString();
    expect(await printed({})).toBe(`PATH=${PATH}\nPWD=${dir}\nSHLVL=1\n`);
    expect(await printed({ env: { PATH, PWD: dir } })).toBe(`PATH=${PATH}\nPWD=${dir}\nSHLVL=1\n`);
    expect(await printed({ env: { PATH, PWD: '/elsewhere' } })).toBe(`PATH=${PATH}\nPWD=${dir}\nSHLVL=1\n`);
  });

  it('runs in the working directory', async () => {
    const r = await runner.run(spec(['pwd', '-P']));
    expect(r.stdout.toString().trim()).toBe(execFileSync('realpath', [dir]).toString().trim());
  });

  it('captures stdout and stderr separately, and into files', async () => {
    const r = await runner.run(spec(['bash', '-c', 'echo out; echo err >&2; printf "\\x00\\xff"']));
    expect(r.stdout).toEqual(Buffer.from('out\n\x00\xff', 'latin1'));
    expect(r.stderr.toString()).toBe('err\n');
    const outFile = join(dir, 'stdout.txt');
    const errFile = join(dir, 'stderr.txt');
    const f = await runner.run(
      spec(['bash', '-c', 'echo to-file; echo err-file >&2'], { stdout: { kind: 'file', path: outFile }, stderr: { kind: 'file', path: errFile } }),
    );
    expect(f.exitCode).toBe(0);
    expect(readFileSync(outFile, 'utf8')).toBe('to-file\n');
    expect(readFileSync(errFile, 'utf8')).toBe('err-file\n');
    expect(f.stdout.length).toBe(0);
  });

  it('truncates a buffer sink at its limit and still finishes', async () => {
    const r = await runner.run(spec(['bash', '-c', 'head -c 300000 /dev/zero; echo done >&2'], { stdout: { kind: 'buffer', limitBytes: 1000 } }));
    expect(r.exitCode).toBe(0);
    expect(r.stdout.length).toBe(1000);
    expect(r.stdoutTruncated).toBe(true);
    expect(r.stderr.toString()).toBe('done\n');
  });

  it('kills the whole process tree on timeout', async () => {
    const marker = uniqueSleep();
    const r = await runner.run(spec(['bash', '-c', `sleep ${marker} & sleep ${marker}`], { timeoutMs: 300 }));
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(r.wallTimeMs).toBeLessThan(5000);
    expect(leftovers(marker)).toEqual([]);
  });

  it('kills background processes the command leaves behind', async () => {
    const marker = uniqueSleep();
    const r = await runner.run(spec(['bash', '-c', `sleep ${marker} & echo started`]));
    expect(r.exitCode).toBe(0);
    expect(r.stdout.toString()).toBe('started\n');
    expect(leftovers(marker)).toEqual([]);
  });

  it('kills the process tree when aborted', async () => {
    const controller = new AbortController();
    const running = runner.run(spec(['sleep', '100'], { signal: controller.signal }));
    setTimeout(() => controller.abort(), 100);
    const r = await running;
    expect(r.signal).toBe('SIGKILL');
    expect(r.timedOut).toBe(false);
  });
}

/** A sleep duration of about 100 s that no other process on the machine uses. */
function uniqueSleep(): string {
  return `100.${process.pid}${Math.floor(Math.random() * 1e6)}`;
}

/** Processes whose command line holds the marker (the runner must have killed them all). */
function leftovers(marker: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(marker) && !line.includes('ps -eo'));
}
