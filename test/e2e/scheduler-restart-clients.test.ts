import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BAZEL_2, BAZEL_2_MISSING, runBazel2 } from '../setup/bazel-2.js';
import { needTool } from '../setup/need-tool.js';
import { parseServerLog } from '../setup/server-log.js';
import { E2eWorkspace } from './e2e-workspace.js';

// `kiln scheduler` and `kiln executor` as processes, the scheduler stopped with SIGTERM while a
// client's action runs: restarted (operations journaled, blobs on disk), the client's build goes on
// through WaitExecution and the action is not run twice (its executor's report is taken); with a
// drain timeout, the action finishes before the scheduler stops and the client gets its result.
const BINARY = fileURLToPath(new URL('../../bin/kiln', import.meta.url));

/** A server role's process: its stdout's first line (the endpoint), its JSON log lines, its exit. */
class Role {
  private stderr = '';
  private stdout = '';
  private readonly waiters = new Set<() => void>();
  readonly exited: Promise<number | null>;
  constructor(readonly child: ChildProcess) {
    child.stdout!.on('data', (c: Buffer) => this.take('stdout', c));
    child.stderr!.on('data', (c: Buffer) => this.take('stderr', c));
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    void this.exited.then(() => this.wake());
  }
  private take(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    this[stream] += chunk.toString();
    this.wake();
  }
  private wake(): void {
    for (const w of [...this.waiters]) w();
  }
  records() {
    return parseServerLog(this.stderr);
  }
  /** Resolves once `test` holds (checked at each output), failing if the process exits first. */
  until<T>(test: () => T | undefined, what: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const value = test();
        if (value !== undefined) {
          this.waiters.delete(check);
          resolve(value);
        } else if (this.child.exitCode !== null) {
          this.waiters.delete(check);
          reject(new Error(`exited before ${what}:\n${this.stderr}`));
        }
      };
      this.waiters.add(check);
      check();
    });
  }
  endpoint(): Promise<string> {
    return this.until(() => (this.stdout.includes('\n') ? this.stdout.split('\n')[0] : undefined), 'its endpoint line');
  }
}

function startRole(args: string[], cwd: string): Role {
  const child = spawn(BINARY, args, { cwd, env: { ...process.env, TMPDIR: cwd }, stdio: ['ignore', 'pipe', 'pipe'] });
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });
  return new Role(child);
}

interface Cluster {
  readonly dir: string;
  readonly endpoint: string;
  scheduler: Role;
  readonly executor: Role;
  /** SIGTERM to the scheduler; resolves with its exit code. */
  stopScheduler(): Promise<number | null>;
  /** A new scheduler on the same port, config and storage. */
  startScheduler(): Promise<void>;
  /** The executor's `runs action` lines. */
  runs(): string[];
}

async function startCluster(execution: Record<string, number>): Promise<Cluster> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-sched-restart-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  // A root executor's sandboxed actions run as nobody, which must reach the build directories.
  await chmod(dir, 0o711);
  const config = join(dir, 'scheduler.json');
  await writeFile(
    config,
    JSON.stringify({ storage: { kind: 'blocks', path: 'store', maxBytes: 1 << 30 }, execution: { operationsFile: 'operations.jsonl', ...execution } }),
  );
  let scheduler = startRole(['scheduler', '--config', config], dir);
  const endpoint = await scheduler.endpoint();
  const port = endpoint.split(':').at(-1)!;
  const executor = startRole(['executor', '--scheduler', endpoint, '--slots', '2', '--name', 'survivor', '--work-dir', join(dir, 'executor')], dir);
  await executor.until(() => executor.records().find((r) => r.msg.includes('working for')), 'working');
  return {
    dir,
    endpoint,
    get scheduler() {
      return scheduler;
    },
    set scheduler(s: Role) {
      scheduler = s;
    },
    executor,
    async stopScheduler() {
      scheduler.child.kill('SIGTERM');
      return scheduler.exited;
    },
    async startScheduler() {
      scheduler = startRole(['scheduler', '--config', config, '--port', port], dir);
      expect(await scheduler.endpoint()).toBe(endpoint);
    },
    runs: () =>
      executor
        .records()
        .filter((r) => r.msg.includes(' runs action '))
        .map((r) => r.actionDigest!),
  };
}

/**
 * The clients' default 5 retries back off for about 3 s in all, which a scheduler restart fits on an
 * idle machine (stop 0.3 s, start 0.7 s); on this shared, loaded one a start has taken 2.6 s, so the
 * clients here retry longer (up to 5 s between attempts), as an operator restarting under load would.
 */
const RETRIES = '--remote_retries=10';

const BUILD = [
  'genrule(name = "first", srcs = ["in.txt"], outs = ["first.txt"], cmd = "cp $< $@")',
  // Slow enough that the scheduler stops while it runs.
  'genrule(name = "slow", srcs = [":first"], outs = ["slow.txt"], cmd = "sleep 3; cat $< $< > $@")',
  '',
].join('\n');

/** Once the executor runs the slow action (the second it runs), stops the scheduler and, when `restart`, starts a new one. */
async function stopWhileSlowRuns(cluster: Cluster, restart: boolean): Promise<number | null> {
  await cluster.executor.until(() => (cluster.runs().length >= 2 ? true : undefined), 'the slow action to run');
  const code = await cluster.stopScheduler();
  if (restart) await cluster.startScheduler();
  return code;
}

describe('a scheduler stopped with SIGTERM mid-build', () => {
  it("restarted, resumes Kiln's build: the running action's report is taken and it runs once", { timeout: 120_000 }, async () => {
    const cluster = await startCluster({});
    const ws = new E2eWorkspace({ 'MODULE.bazel': '', 'pkg/in.txt': 'data\n', 'pkg/BUILD': BUILD });
    const [run, stopped] = await Promise.all([
      ws.kiln(['build', RETRIES, `--remote_executor=${cluster.endpoint}`, '//pkg:slow']),
      stopWhileSlowRuns(cluster, true),
    ]);
    expect(stopped).toBe(0);
    expect(run.code, run.stderr).toBe(0);
    expect(ws.read('kiln-bin/pkg/slow.txt')).toBe('data\ndata\n');
    expect(new Set(cluster.runs()).size).toBe(cluster.runs().length);
    expect(cluster.scheduler.records().some((r) => r.msg.startsWith('resumed after a restart: waiting for the report'))).toBe(true);
  });

  it('with a drain timeout, lets the running action finish and its client get the result before it exits', { timeout: 120_000 }, async () => {
    const cluster = await startCluster({ drainTimeoutMs: 30_000 });
    const ws = new E2eWorkspace({ 'MODULE.bazel': '', 'pkg/in.txt': 'data\n', 'pkg/BUILD': BUILD });
    const [run, stopped] = await Promise.all([
      ws.kiln(['build', RETRIES, `--remote_executor=${cluster.endpoint}`, '//pkg:slow']),
      stopWhileSlowRuns(cluster, false),
    ]);
    expect(stopped).toBe(0);
    expect(run.code, run.stderr).toBe(0);
    expect(ws.read('kiln-bin/pkg/slow.txt')).toBe('data\ndata\n');
    const messages = cluster.scheduler.records().map((r) => r.msg);
    expect(messages).toContain('drained: every running action finished');
    // The slow action's operation ended (exit code 0) before the scheduler said it had drained.
    const finished = messages.lastIndexOf('operation finished: exit code 0');
    expect(finished).toBeGreaterThan(messages.indexOf('draining: taking no more work; running actions may finish within 30s'));
    expect(finished).toBeLessThan(messages.indexOf('drained: every running action finished'));
    expect(new Set(cluster.runs()).size).toBe(cluster.runs().length);
  });
});

describe('a scheduler stopped with SIGTERM under Bazel 2.1.0', () => {
  if (!needTool('Bazel 2.1.0', BAZEL_2 !== '', BAZEL_2_MISSING)) return;
  it("restarted, resumes Bazel's build: the running action's report is taken and it runs once", { timeout: 300_000 }, async () => {
    const cluster = await startCluster({});
    const root = join(cluster.dir, 'bazel');
    await Promise.all(['ws/pkg', 'home', 'tmp'].map((d) => mkdir(join(root, d), { recursive: true })));
    await writeFile(join(root, 'ws', 'WORKSPACE'), 'workspace(name = "restart")\n');
    await writeFile(join(root, 'ws', 'pkg', 'BUILD'), BUILD);
    await writeFile(join(root, 'ws', 'pkg', 'in.txt'), 'data\n');
    onTestFinished(async () => {
      await runBazel2(root, ['shutdown']).catch(() => undefined);
      await new Promise((resolve) => spawn('chmod', ['-R', 'u+w', root], { stdio: 'ignore' }).on('close', resolve));
    });
    const [run, stopped] = await Promise.all([
      runBazel2(root, ['build', '--noshow_progress', '--color=no', '--curses=no', RETRIES, `--remote_executor=${cluster.endpoint}`, '//pkg:slow']),
      stopWhileSlowRuns(cluster, true),
    ]);
    expect(stopped).toBe(0);
    expect(run.code, run.output).toBe(0);
    expect(await readFile(join(root, 'ws', 'bazel-bin', 'pkg', 'slow.txt'), 'utf8')).toBe('data\ndata\n');
    expect(new Set(cluster.runs()).size).toBe(cluster.runs().length);
  });
});
