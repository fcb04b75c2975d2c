import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/core/index.js';
import type { RunRequest, Runner } from '../../../executor/runners/runner.js';

const PATH = '/usr/bin:/bin';

export interface RunnerCaseOptions {
  /** The runner keeps the command off the network and away from root (not the plain local process). */
  readonly confines: boolean;
  /**
   * Where the command sees its build directory: at its host path, or (warm Docker containers, whose
   * mounts are fixed when they start) at a path of its own.
   */
  readonly buildDirectoryPath?: 'host' | 'own';
}

/** Live processes (not zombies) whose command line holds `marker`. */
function processesNamed(marker: string): string[] {
  const commandLine = (pid: string) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`);
    } catch {
      return Buffer.alloc(0); // ended meanwhile
    }
  };
  return readdirSync('/proc').filter((pid) => /^\d+$/.test(pid) && commandLine(pid).includes(marker));
}

/** The behaviour every executor Runner shares; docker-runner and local-runner tests both call this. */
export function runnerCases(getRunner: () => Runner, options: RunnerCaseOptions): void {
  let buildDirectory: string;
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((socket) => socket.end('hello\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => {
    buildDirectory = mkdtempSync(join(tmpdir(), 'kiln-build-'));
    // As an executor does: inputs readable by the (possibly other) user running the command.
    chmodSync(buildDirectory, 0o755);
  });
  afterEach(() => rmSync(buildDirectory, { recursive: true, force: true }));

  const request = (args: string[], extra: Partial<RunRequest> = {}): RunRequest => ({
    buildDirectory,
    arguments: args,
    environment: { PATH },
    workingDirectory: '',
    platform: [],
    timeoutMs: 20_000,
    stdout: { kind: 'buffer', limitBytes: 1 << 20 },
    stderr: { kind: 'buffer', limitBytes: 1 << 20 },
    ...extra,
  });
  const sh = (script: string, extra: Partial<RunRequest> = {}): RunRequest => request(['bash', '-c', script], extra);

  it('returns exact stdout, stderr and exit code', async () => {
    const r = await getRunner().run(sh('printf "out\\n\\x00\\xff"; echo err >&2; exit 3'));
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toEqual(Buffer.from('out\n\x00\xff', 'latin1'));
    expect(r.stderr.toString()).toBe('err\n');
    expect(r.timedOut).toBe(false);
    expect(r.completedAtMs).toBeGreaterThanOrEqual(r.startedAtMs);
    const ok = await getRunner().run(request(['true']));
    expect(ok.exitCode).toBe(0);
  });

  it('gives the command exactly its environment', async () => {
    const r = await getRunner().run(request(['env'], { environment: { PATH, A: '1', WITH_SPACE: 'x  y', EMPTY: '' } }));
    expect(r.stdout.toString().split('\n').filter(Boolean).sort()).toEqual(['A=1', 'EMPTY=', `PATH=${PATH}`, 'WITH_SPACE=x  y']);
  });

  it('runs in the working directory and writes outputs into the build directory', async () => {
    mkdirSync(join(buildDirectory, 'pkg', 'sub'), { recursive: true });
    const r = await getRunner().run(sh('pwd; mkdir -p out/dir && echo made > out/dir/file.txt && echo top > ../top.txt', { workingDirectory: 'pkg/sub' }));
    expect(r.stderr.toString()).toBe('');
    expect(r.exitCode).toBe(0);
    if (options.buildDirectoryPath === 'own') expect(r.stdout.toString()).toMatch(/^\/.+\/pkg\/sub\n$/);
    else expect(r.stdout.toString()).toBe(`${join(buildDirectory, 'pkg', 'sub')}\n`);
    expect(readFileSync(join(buildDirectory, 'pkg/sub/out/dir/file.txt'), 'utf8')).toBe('made\n');
    expect(readFileSync(join(buildDirectory, 'pkg/top.txt'), 'utf8')).toBe('top\n');
  });

  it('refuses a working directory outside the input root', async () => {
    await expect(getRunner().run(request(['true'], { workingDirectory: '../elsewhere' }))).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('writes stdout and stderr to files', async () => {
    const out = join(buildDirectory, '..', `${buildDirectory.split('/').pop()}.stdout`);
    const err = `${out}.err`;
    try {
      const r = await getRunner().run(sh('seq 1 20000; echo bad >&2', { stdout: { kind: 'file', path: out }, stderr: { kind: 'file', path: err } }));
      expect(r.exitCode).toBe(0);
      const lines = readFileSync(out, 'utf8').split('\n');
      expect(lines.length).toBe(20001);
      expect(lines[19999]).toBe('20000');
      expect(readFileSync(err, 'utf8')).toBe('bad\n');
    } finally {
      rmSync(out, { force: true });
      rmSync(err, { force: true });
    }
  });

  it('keeps small spill-sink output in memory and moves large output whole into the file', async () => {
    const out = join(buildDirectory, '..', `${buildDirectory.split('/').pop()}.spill-out`);
    const err = `${out}.err`;
    try {
      const spill = { stdout: { kind: 'spill', memoryBytes: 1000, path: out }, stderr: { kind: 'spill', memoryBytes: 1000, path: err } } as const;
      const small = await getRunner().run(sh('echo small; echo oops >&2', spill));
      expect(small.stdout.toString()).toBe('small\n');
      expect(small.stderr.toString()).toBe('oops\n');
      expect([small.stdoutSpilled, small.stderrSpilled]).toEqual([false, false]);
      expect(existsSync(out) || existsSync(err)).toBe(false);
      const large = await getRunner().run(sh('seq 1 200000; echo bad >&2', spill));
      expect(large.exitCode).toBe(0);
      expect([large.stdoutSpilled, large.stderrSpilled]).toEqual([true, false]);
      expect(large.stdout.length).toBe(0);
      expect(large.stdoutTruncated).toBe(false);
      const lines = readFileSync(out, 'utf8').split('\n');
      expect(lines.length).toBe(200001);
      expect(lines[0]).toBe('1');
      expect(lines[199999]).toBe('200000');
      expect(large.stderr.toString()).toBe('bad\n');
    } finally {
      rmSync(out, { force: true });
      rmSync(err, { force: true });
    }
  });

  it('ends with 127 when the program does not exist', async () => {
    const r = await getRunner().run(request(['kiln-no-such-program']));
    expect(r.exitCode).toBe(127);
    expect(r.stderr.toString()).toContain('kiln-no-such-program');
  });

  it('kills the command at its timeout', async () => {
    const started = Date.now();
    const r = await getRunner().run(request(['sleep', '100'], { timeoutMs: 500 }));
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBe(137);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('kills the command when cancelled', async () => {
    const controller = new AbortController();
    const running = getRunner().run(request(['sleep', '100'], { signal: controller.signal }));
    setTimeout(() => controller.abort(), 300);
    const r = await running;
    expect(r.exitCode).toBe(137);
    expect(r.timedOut).toBe(false);
  });

  // What only a confining runner (a sandbox) promises: declared for those alone, not skipped elsewhere.
  if (options.confines) {
    it('after a timeout or cancel, no process of the command is left when the run returns', async () => {
      // Busy processes in sessions of their own (out of the killed process group), their output
      // closed (the run does not wait for pipes they hold), named by a marker.
      const marker = `kiln-leftover-${process.pid}-${Date.now()}`;
      const script = `for i in 1 2 3 4; do setsid bash -c 'while :; do :; done' ${marker} >/dev/null 2>&1 </dev/null & done; sleep 100`;
      const timedOut = await getRunner().run(sh(script, { timeoutMs: 300 }));
      expect(timedOut.timedOut).toBe(true);
      expect(processesNamed(marker)).toEqual([]);
      const controller = new AbortController();
      const running = getRunner().run(sh(script, { signal: controller.signal }));
      setTimeout(() => controller.abort(), 300);
      await running;
      expect(processesNamed(marker)).toEqual([]);
    });

    it('has no network: a loopback server on the host is unreachable', async () => {
      const r = await getRunner().run(sh(`exec 3<>/dev/tcp/127.0.0.1/${port} && head -n 1 <&3`));
      expect(r.exitCode).not.toBe(0);
      expect(r.stdout.toString()).toBe('');
    });

    it('gives concurrent actions network namespaces of their own: they cannot reach each other', async () => {
      // Both run at once (each lives a second, well beyond the other's start); a shared namespace shows one identity.
      // Each in a build directory of its own, as the executor gives them.
      const other = mkdtempSync(join(tmpdir(), 'kiln-build-'));
      chmodSync(other, 0o755);
      const [a, b] = await Promise.all([
        getRunner().run(sh('readlink /proc/self/ns/net; sleep 1')),
        getRunner().run(sh('readlink /proc/self/ns/net; sleep 1', { buildDirectory: other })),
      ]).finally(() => rmSync(other, { recursive: true, force: true }));
      expect(a.exitCode).toBe(0);
      expect(b.exitCode).toBe(0);
      expect(a.stdout.toString()).toMatch(/^net:\[\d+\]\n$/);
      expect(a.stdout.toString()).not.toBe(b.stdout.toString());
    });

    it('runs the command as a non-root user', async () => {
      const r = await getRunner().run(request(['id', '-u']));
      expect(r.exitCode).toBe(0);
      expect(Number(r.stdout.toString())).toBeGreaterThan(0);
    });
  }
}
