import type { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newServiceAccount, newToken } from '../../scheduler/index.js';
import { issueCertificate, makeCa } from '../scheduler/security/test-certificates.js';
import type { TestHost, TestNetwork } from '../setup/test-network.js';
import { serverLogText } from '../setup/server-log.js';

/** The built launcher: every process of the multi-host cluster is the binary an operator runs. */
export const KILN_BINARY = fileURLToPath(new URL('../../bin/kiln', import.meta.url));

/** A process on one of the test hosts, its output kept, its log lines awaitable. */
export class HostProcess {
  private output = '';
  private readonly waiters = new Set<() => void>();
  readonly exited: Promise<number | null>;

  constructor(
    readonly what: string,
    readonly child: ChildProcess,
  ) {
    // Whole lines only; the servers' JSON log lines read as they would on a terminal (INFO: …).
    const lineTaker = () => {
      let pending = '';
      return (chunk: Buffer) => {
        pending += chunk.toString();
        const end = pending.lastIndexOf('\n') + 1;
        if (end === 0) return;
        const lines = pending.slice(0, end).split('\n').slice(0, -1);
        pending = pending.slice(end);
        for (const line of lines) this.output += line.startsWith('{') ? serverLogText(`${line}\n`) : `${line}\n`;
        for (const wake of this.waiters) wake();
      };
    };
    child.stdout?.on('data', lineTaker());
    child.stderr?.on('data', lineTaker());
    this.exited = new Promise((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code, signal) => {
        for (const wake of this.waiters) wake();
        resolve(code ?? (signal ? -1 : null));
      });
    });
  }

  /** Everything it printed (stdout and stderr interleaved as they came). */
  log(): string {
    return this.output;
  }

  /**
   * Resolves with the `occurrence`th match of `pattern` (global) in its output as soon as it is
   * printed; fails if it exits first.
   */
  waitFor(pattern: RegExp, occurrence = 1, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    const global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => settle(new Error(`${this.what}: no ${pattern} within ${timeoutMs} ms; it printed:\n${this.output}`)), timeoutMs);
      const settle = (result: RegExpMatchArray | Error) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        if (result instanceof Error) reject(result);
        else resolve(result);
      };
      const check = () => {
        const m = [...this.output.matchAll(global)][occurrence - 1];
        if (m) settle(m);
        else if (this.child.exitCode !== null || this.child.signalCode !== null)
          settle(new Error(`${this.what} exited before printing ${pattern}:\n${this.output}`));
      };
      this.waiters.add(check);
      check();
    });
  }
}

/** What a client run printed and returned. */
export interface ClientRun {
  readonly code: number | null;
  readonly output: string;
}

/** The environment of every process on the hosts: a HOME of its own, nothing else of the caller's. */
function environment(home: string): NodeJS.ProcessEnv {
  mkdirSync(home, { recursive: true });
  return { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home, TMPDIR: home };
}

/** Runs `command ARGS` on `host` from `cwd` to its end. */
export async function runOn(network: TestNetwork, host: TestHost, command: string, args: readonly string[], cwd: string, home: string): Promise<ClientRun> {
  const run = new HostProcess(
    `${command} on ${host.name}`,
    network.spawn(host, command, args, { cwd, env: environment(home), stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  const code = await run.exited;
  return { code, output: run.log() };
}

/**
 * Starts `kiln ROLE --config FILE` (scheduler, executor, and the storage role alike) on `host` with
 * `config` written to `dir/NAME.json`; resolves once it printed `ready`.
 */
export async function startServer(
  network: TestNetwork,
  host: TestHost,
  role: string,
  name: string,
  config: object,
  dir: string,
  ready: RegExp,
): Promise<HostProcess> {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(config, null, 2));
  const server = new HostProcess(
    `kiln ${role} ${name} on ${host.name}`,
    network.spawn(host, KILN_BINARY, [role, '--config', file], { cwd: dir, env: environment(join(dir, `${name}-home`)), stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  await server.waitFor(ready);
  return server;
}

/**
 * A secured cluster across test hosts: on one host two storage nodes and the scheduler, whose CAS and
 * action cache mirror over both nodes; one executor on each of the others.
 */
export interface MultihostCluster {
  /** `grpcs://ADDRESS:PORT` of the scheduler. */
  readonly endpoint: string;
  /** The CA every server certificate chains to (the clients' `--tls_certificate`). */
  readonly ca: string;
  /** Bearer tokens by role: `developer` (cache-reader, executor-client), `ci` (cache-writer, executor-client), `reader` (cache-reader). */
  readonly tokens: { readonly developer: string; readonly ci: string; readonly reader: string };
  /**
   * The key file of service account `bazel-ci` (cache-writer, executor-client), for Bazel 2.1.0's
   * `--google_credentials`: its token_uri is the scheduler's token endpoint on A.
   */
  readonly serviceAccountKey: string;
  readonly scheduler: HostProcess;
  /** The storage nodes, `storage-1` and `storage-2`. */
  readonly storage: ReadonlyMap<string, HostProcess>;
  /** Starts a storage node again (after a kill) with its config and its disk store as they were. */
  restartStorage(name: string): Promise<HostProcess>;
  /** By host name. */
  readonly executors: ReadonlyMap<string, HostProcess>;
  /** Interrupts every server (SIGINT, as Ctrl-C) and waits for them to exit. */
  stop(): Promise<void>;
}

export interface MultihostClusterOptions {
  readonly network: TestNetwork;
  readonly dir: string;
  readonly schedulerHost: string;
  readonly executorHosts: readonly string[];
  /** Actions each executor runs at once. */
  readonly slots: number;
}

/**
 * TLS on every port (the scheduler's certificate names its host's address), tokens with roles for the
 * clients, a worker token for the executors; executors beat every second, so one killed is noticed
 * and its actions queued again within about two.
 */
export async function startMultihostCluster(options: MultihostClusterOptions): Promise<MultihostCluster> {
  const { network, dir } = options;
  const schedulerHost = network.host(options.schedulerHost);
  const ca = await makeCa(dir, 'multihost');
  await issueCertificate(ca, dir, 'scheduler', 'kiln-scheduler', `IP:${schedulerHost.address}`);
  const developer = newToken('developer');
  const ci = newToken('ci');
  const reader = newToken('reader');
  const worker = newToken('executors');
  writeFileSync(join(dir, 'tokens.txt'), [developer, ci, reader, worker].map((t) => `${t.line}\n`).join(''));
  writeFileSync(join(dir, 'worker-token.txt'), `${worker.token}\n`);
  const tokenPort = 8981;
  const account = newServiceAccount('bazel-ci', 'bazel-ci@kiln.test', `http://${schedulerHost.address}:${tokenPort}/token`);
  writeFileSync(join(dir, 'bazel-ci.json'), account.keyFile);
  writeFileSync(join(dir, 'bazel-ci.pub.pem'), account.publicKeyPem);
  const servers: HostProcess[] = [];
  const stop = async () => {
    for (const s of servers.reverse()) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGINT');
    await Promise.all(servers.map((s) => s.exited));
  };
  // The nodes listen on the scheduler's host's loopback: their traffic never leaves that host.
  const storagePorts = new Map([
    ['storage-1', 8990],
    ['storage-2', 8991],
  ]);
  const startStorage = async (name: string) => {
    const node = await startServer(
      network,
      schedulerHost,
      'storage',
      name,
      { host: '127.0.0.1', port: storagePorts.get(name)!, storage: { kind: 'disk', path: join(dir, name), maxBytes: 1 << 30 } },
      dir,
      /^grpc:\/\/\S+$/m,
    );
    servers.push(node);
    return node;
  };
  const mirrored = (keyspace: 'cas' | 'ac') => ({
    kind: 'mirrored',
    a: { kind: 'grpc', endpoint: `grpc://127.0.0.1:${storagePorts.get('storage-1')}`, keyspace, retries: 0 },
    b: { kind: 'grpc', endpoint: `grpc://127.0.0.1:${storagePorts.get('storage-2')}`, keyspace, retries: 0 },
  });
  try {
    const storage = new Map<string, HostProcess>();
    for (const name of storagePorts.keys()) storage.set(name, await startStorage(name));
    const scheduler = await startServer(
      network,
      schedulerHost,
      'scheduler',
      'scheduler',
      {
        host: schedulerHost.address,
        port: 8980,
        instances: { '': { cas: mirrored('cas'), actionCache: { kind: 'completeness-checking', backend: mirrored('ac') } } },
        tls: { certificate: 'scheduler.pem', key: 'scheduler.key' },
        auth: {
          tokenFile: 'tokens.txt',
          serviceAccounts: { 'bazel-ci': { email: 'bazel-ci@kiln.test', publicKey: 'bazel-ci.pub.pem' } },
          // Plain HTTP: Bazel's JVM trusts only its own CA store for it; the hosts' link is the test's own.
          tokenEndpoint: { host: schedulerHost.address, port: tokenPort, plaintext: true },
          roles: {
            'token:bazel-ci': { '*': ['cache-writer', 'executor-client'] },
            'token:developer': { '*': ['cache-reader', 'executor-client'] },
            'token:ci': { '*': ['cache-writer', 'executor-client'] },
            'token:reader': { '*': 'cache-reader' },
            'token:executors': { '*': 'worker' },
          },
        },
        execution: { heartbeatIntervalMs: 1000, heartbeatGraceMs: 1000, maxSynchronizeWaitMs: 500 },
      },
      dir,
      /^grpcs:\/\/\S+$/m,
    );
    servers.push(scheduler);
    const endpoint = (await scheduler.waitFor(/^grpcs:\/\/\S+$/m))[0];
    const executors = new Map<string, HostProcess>();
    for (const name of options.executorHosts) {
      const executor = await startServer(
        network,
        network.host(name),
        'executor',
        `executor-${name}`,
        {
          scheduler: endpoint,
          'tls-ca': ca.ca,
          'token-file': join(dir, 'worker-token.txt'),
          runner: 'local',
          slots: options.slots,
          name: `executor-${name}`,
          'work-dir': join(dir, `executor-${name}`),
        },
        dir,
        /^INFO: executor \S+ \(.*working for/m,
      );
      servers.push(executor);
      executors.set(name, executor);
    }
    const restartStorage = async (name: string) => {
      const node = await startStorage(name);
      storage.set(name, node);
      return node;
    };
    return {
      endpoint,
      ca: ca.ca,
      tokens: { developer: developer.token, ci: ci.token, reader: reader.token },
      serviceAccountKey: join(dir, 'bazel-ci.json'),
      scheduler,
      storage,
      restartStorage,
      executors,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
