import * as grpc from '@grpc/grpc-js';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/commands/cluster.js';
import { main as executorMain } from '../../../src/cli/commands/executor.js';
import { main as schedulerMain } from '../../../src/cli/commands/scheduler.js';
import type { CliIO } from '../../../src/cli/io.js';
import { digestOf, encodeMessage, type longrunning, reapi } from '../../../src/core/index.js';
import { connect, must } from '../cache-server-fixture.js';
import { collectStream } from './cluster-fixture.js';
import { needTool } from '../../setup/need-tool.js';
import { parseServerLog, serverLogText } from '../../setup/server-log.js';

function fakeIO(cwd: string, env: Record<string, string> = {}) {
  let out = '';
  let err = '';
  let interrupt: () => void = () => undefined;
  let onLine: (line: string) => void = () => undefined;
  const firstLine = new Promise<string>((resolve) => (onLine = resolve));
  const io: CliIO = {
    stdout: {
      write: (c: string | Uint8Array) => {
        out += c.toString();
        if (out.includes('\n')) onLine(out.slice(0, out.indexOf('\n')));
      },
    },
    stderr: { write: (c: string | Uint8Array) => (err += c.toString()) },
    cwd,
    env,
    interrupted: new Promise<void>((resolve) => (interrupt = resolve)),
  };
  return { io, firstLine, interrupt: () => interrupt(), out: () => out, err: () => err, log: () => serverLogText(err), records: () => parseServerLog(err) };
}

/** Uploads a one-command action and runs it through Execute; returns the ExecuteResponse. */
async function runThrough(endpoint: string, script: string): Promise<reapi.ExecuteResponse | undefined> {
  const clients = connect(endpoint);
  const address = endpoint.replace('grpc://', '');
  const Exec = grpc.makeGenericClientConstructor(reapi.ExecutionService as unknown as grpc.ServiceDefinition, 'Execution');
  const exec = new Exec(address, grpc.credentials.createInsecure()) as unknown as reapi.ExecutionClient;
  try {
    const command = encodeMessage(reapi.Command, {
      arguments: ['/bin/sh', '-c', script],
      outputPaths: ['out'],
      environmentVariables: [{ name: 'PATH', value: '/usr/bin:/bin' }],
    });
    const root = encodeMessage(reapi.Directory, {});
    const action = encodeMessage(reapi.Action, { commandDigest: command.digest, inputRootDigest: root.digest });
    await must(clients.cas, clients.cas.BatchUpdateBlobs, {
      requests: [command, root, action].map((m) => ({ digest: m.digest, data: m.data })),
    });
    const outcome = await collectStream(exec.Execute({ actionDigest: action.digest }) as grpc.ClientReadableStream<longrunning.Operation>);
    return outcome.response;
  } finally {
    exec.close();
    clients.close();
  }
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-cluster-up-'));
  // A root executor's sandboxed actions run as nobody, which must reach the work directory.
  await chmod(dir, 0o711);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('kiln cluster up / scheduler / executor', () => {
  it('cluster up --executors 2 --runner local runs actions and stops cleanly on interrupt', async () => {
    const f = fakeIO(dir);
    const exit = main(['up', '--executors', '2', '--runner', 'local', '--slots', '1'], f.io);
    const endpoint = await f.firstLine;
    expect(endpoint).toMatch(/^grpc:\/\/127\.0\.0\.1:\d+$/);
    const response = await runThrough(endpoint, 'echo from-cluster > out');
    expect(response?.result?.exitCode).toBe(0);
    expect(response?.result?.outputFiles[0]?.digest).toEqual(digestOf(Buffer.from('from-cluster\n')));
    f.interrupt();
    expect(await exit).toBe(0);
    expect(f.log()).toMatch(/^INFO: services: .*build\.bazel\.remote\.execution\.v2\.Execution/m);
    expect(f.log()).toMatch(/^INFO: 2 executor\(s\) started/m);
    // The action's lines carry its operation, action digest and (here none) invocation id.
    const ran = f.records().find((r) => r.msg.startsWith('executor executor-') && r.msg.includes(' runs action '));
    expect(ran?.operation).toMatch(/^operations\//);
    expect(ran?.actionDigest).toMatch(/^[0-9a-f]{64}\/\d+$/);
    const finished = f.records().find((r) => r.msg === 'operation finished: exit code 0');
    expect(finished).toMatchObject({ level: 'info', role: 'cluster', operation: ran?.operation, actionDigest: ran?.actionDigest });
  });

  it('kiln scheduler and kiln executor work together', async () => {
    const s = fakeIO(dir);
    const schedulerExit = schedulerMain([], s.io);
    const endpoint = await s.firstLine;
    const e = fakeIO(dir);
    const executorExit = executorMain(['--scheduler', endpoint, '--slots', '1', '--name', 'cli-executor', '--work-dir', join(dir, 'w')], e.io);
    const response = await runThrough(endpoint, 'echo via-cli > out');
    expect(response?.result?.executionMetadata?.worker).toBe('cli-executor');
    e.interrupt();
    expect(await executorExit).toBe(0);
    expect(existsSync(join(dir, 'w'))).toBe(true); // a --work-dir is the user's: kept
    // Without --work-dir, the executor's own directory under the temp dir goes when it stops.
    const own = join(tmpdir(), `kiln-executor-${process.pid}`);
    const d = fakeIO(dir);
    const defaultExit = executorMain(['--scheduler', endpoint, '--slots', '1', '--name', 'own-dir'], d.io);
    expect((await runThrough(endpoint, 'echo again > out'))?.result?.executionMetadata?.worker).toBe('own-dir');
    expect(existsSync(own)).toBe(true);
    d.interrupt();
    expect(await defaultExit).toBe(0);
    expect(existsSync(own)).toBe(false);
    s.interrupt();
    expect(await schedulerExit).toBe(0);
  });

  it('--runner docker without an engine says how to start one and exits non-zero', async () => {
    const f = fakeIO(dir, { DOCKER_HOST: `unix://${join(dir, 'no-such-docker.sock')}` });
    const exit = await main(['up', '--executors', '1', '--runner', 'docker'], f.io);
    expect(exit).not.toBe(0);
    expect(f.err()).toMatch(/no Docker engine answers .*scripts\/docker\/start-dockerd\.sh/);
    expect(f.out()).toBe('');
  });

  it('reads the execution section of the config file and names a bad field', async () => {
    await writeFile(join(dir, 'bad.json'), JSON.stringify({ execution: { maxRetries: -1 } }));
    const bad = fakeIO(dir);
    expect(await main(['up', '--config', 'bad.json'], bad.io)).toBe(2);
    expect(bad.err()).toMatch(/bad\.json: execution\.maxRetries: expected a non-negative integer/);
    await writeFile(join(dir, 'rules.json'), JSON.stringify({ execution: { platformRules: { cores: 'fewest' } } }));
    const rules = fakeIO(dir);
    expect(await main(['up', '--config', 'rules.json'], rules.io)).toBe(2);
    expect(rules.err()).toMatch(/execution\.platformRules\.cores: expected one of "exact", "minimum", "ignore"/);
    // A no-executor wait of 0: an action nobody can run fails at once, naming the property.
    await writeFile(join(dir, 'fast.json'), JSON.stringify({ execution: { noExecutorWaitMs: 0 } }));
    const fast = fakeIO(dir);
    const exit = main(['up', '--config', 'fast.json'], fast.io);
    const response = await runThrough(await fast.firstLine, 'true');
    expect(response?.status?.code).toBe(9); // FAILED_PRECONDITION
    expect(response?.status?.message).toMatch(/no executor can run this action/);
    fast.interrupt();
    expect(await exit).toBe(0);
  });

  const dockerHost = process.env['KILN_DOCKER_HOST'] ?? process.env['DOCKER_HOST'] ?? '';
  const noDocker = 'KILN_DOCKER_HOST is not set: run scripts/test-setup.d/20-docker.sh (or npm test) for the Docker runner';
  if (needTool('Docker', dockerHost !== '', noDocker)) {
    it('cluster up --runner docker runs actions in containers as a non-root user, under its limit flags', { timeout: 120_000 }, async () => {
      const f = fakeIO(dir, { DOCKER_HOST: dockerHost });
      const exit = main(['up', '--executors', '1', '--runner', 'docker', '--slots', '1', '--pids-limit', '64', '--memory-limit', '64m'], f.io);
      const endpoint = await f.firstLine;
      const response = await runThrough(endpoint, 'id -u > out');
      expect(response?.result?.exitCode).toBe(0);
      expect(response?.result?.outputFiles[0]?.digest).not.toEqual(digestOf(Buffer.from('0\n')));
      const forks = await runThrough(endpoint, 'i=0; while [ $i -lt 400 ]; do sleep 30 & i=$((i+1)); done; echo forked > out');
      expect(forks?.result?.exitCode).not.toBe(0);
      const memory = await runThrough(endpoint, 'x=$(head -c 200000000 /dev/zero | tr "\\0" a); echo ${#x} > out');
      expect(memory?.result?.exitCode).toBe(137);
      f.interrupt();
      expect(await exit).toBe(0);
      expect(f.log()).toContain('runner docker');
      expect(f.log()).toMatch(/INFO: limits \(docker\): memory 64m, pids 64, CPUs \S+ per action/);
    });
  }

  it('names a bad resource-limit flag or config key of kiln executor and kiln cluster up', async () => {
    const cases: [Promise<number>, ReturnType<typeof fakeIO>, RegExp][] = [];
    const run = (command: typeof main, args: string[], message: RegExp) => {
      const f = fakeIO(dir);
      cases.push([command(args, f.io), f, message]);
    };
    run(
      executorMain,
      ['--scheduler', 'grpc://127.0.0.1:1', '--memory-limit', 'lots'],
      /--memory-limit: expected bytes \(a number, or with a k, m or g suffix\) of at least 6m \(0 for no limit\), got "lots"/,
    );
    run(executorMain, ['--scheduler', 'grpc://127.0.0.1:1', '--max-pids-limit=10'], /--max-pids-limit: the ceiling 10 is below the default limit 256/);
    await writeFile(join(dir, 'executor.json'), JSON.stringify({ scheduler: 'grpc://127.0.0.1:1', 'cpu-limit': 'all' }));
    run(executorMain, ['--config', 'executor.json'], /executor\.json: cpu-limit: expected a number of CPUs/);
    // The executor's config file goes through the shared JSON-config reader: unknown fields and wrong types name their path.
    await writeFile(join(dir, 'misspelt.json'), JSON.stringify({ scheduler: 'grpc://127.0.0.1:1', slot: 2 }));
    run(executorMain, ['--config', 'misspelt.json'], /misspelt\.json: slot: unknown field \(allowed: scheduler, runner, slots, /);
    await writeFile(join(dir, 'typed.json'), JSON.stringify({ scheduler: 'grpc://127.0.0.1:1', platform: ['OSFamily=linux', 3] }));
    run(executorMain, ['--config', 'typed.json'], /typed\.json: platform\[1\]: expected a string, got 3/);
    await writeFile(join(dir, 'slots.json'), JSON.stringify({ scheduler: 'grpc://127.0.0.1:1', slots: '4' }));
    run(executorMain, ['--config', 'slots.json'], /slots\.json: slots: expected a positive integer, got "4"/);
    run(main, ['up', '--image', ''], /--image expects an image name/);
    run(main, ['up', '--pids-limit', '-3'], /--pids-limit: expected an integer/);
    run(schedulerMain, ['--memory-limit', '1g'], /Unrecognized option: --memory-limit \(start executors with 'kiln executor' or 'kiln cluster up'\)/);
    await writeFile(join(dir, 'limits.json'), JSON.stringify({ executor: { 'memory-limit': '1m' } }));
    run(main, ['up', '--config', 'limits.json'], /limits\.json: executor\.memory-limit: expected bytes .* of at least 6m/);
    await writeFile(join(dir, 'colour.json'), JSON.stringify({ executor: { colour: 'red' } }));
    run(
      main,
      ['up', '--config', 'colour.json'],
      /colour\.json: executor\.colour: unknown field \(allowed: memory-limit, pids-limit, cpu-limit, max-memory-limit/,
    );
    for (const [exit, f, message] of cases) {
      expect(await exit).toBe(2);
      expect(f.err()).toMatch(message);
    }
  });

  it('cluster up applies the limits of its flags and config to its executors and says which', async () => {
    await writeFile(join(dir, 'executor-limits.json'), JSON.stringify({ executor: { 'memory-limit': '512m', 'pids-limit': 100 } }));
    const f = fakeIO(dir);
    const exit = main(['up', '--executors', '1', '--runner', 'local', '--slots', '1', '--config', 'executor-limits.json', '--pids-limit', '64'], f.io);
    const endpoint = await f.firstLine;
    // 80 processes are beyond the flag's 64 (it wins over the config's 100), where cgroups exist.
    const response = await runThrough(endpoint, 'i=0; while [ $i -lt 80 ]; do sleep 30 & i=$((i+1)); done; echo forked > out');
    f.interrupt();
    expect(await exit).toBe(0);
    if (f.log().includes('INFO: limits (cgroup')) {
      expect(f.log()).toMatch(/INFO: limits \(cgroup v[12]\): memory 512m, pids 64, CPUs \S+ per action/);
      expect(response?.result?.exitCode).not.toBe(0);
    } else {
      expect(f.log()).toMatch(/WARNING: local runner: actions run without memory, pids or CPU limits: .*cgroup/);
      expect(f.log()).toContain('INFO: no limits: actions may use all memory, processes and CPUs');
    }
  });

  it('kiln executor requires --scheduler', async () => {
    const f = fakeIO(dir);
    expect(await executorMain([], f.io)).toBe(2);
    expect(f.err()).toMatch(/--scheduler is required/);
  });
});
