import { onTestFinished } from 'vitest';
import { main as clusterMain } from '../../src/cli/commands/cluster.js';
import { main as storageMain } from '../../src/cli/commands/storage.js';
import type { CliIO } from '../../src/cli/io.js';

/** A real `kiln cluster up` (the command's own main, in process) on an ephemeral loopback port. */
export interface KilnCluster {
  /** `grpc://127.0.0.1:PORT`. */
  readonly endpoint: string;
  readonly port: number;
  /** Interrupts it (as Ctrl-C would) and waits for it to exit. */
  stop(): Promise<void>;
  /** Stops it and starts a new one on the same port with the same arguments (all memory state lost). */
  restart(): Promise<void>;
  /** What it logged. */
  log(): string;
}

export function startKilnCluster(
  args: readonly string[] = ['--executors', '1', '--runner', 'local'],
  cwd = process.cwd(),
  env: Record<string, string | undefined> = process.env,
): Promise<KilnCluster> {
  return startKilnServer((a, io) => clusterMain(['up', ...a], io), args, cwd, env);
}

/** A real `kiln storage` (the command's own main, in process) on an ephemeral loopback port. */
export function startKilnStorage(args: readonly string[], cwd = process.cwd()): Promise<KilnCluster> {
  return startKilnServer(storageMain, args, cwd, process.env);
}

async function startKilnServer(
  main: (args: string[], io: CliIO) => Promise<number>,
  args: readonly string[],
  cwd: string,
  env: Record<string, string | undefined>,
): Promise<KilnCluster> {
  let log = '';
  const start = async (extra: readonly string[]) => {
    let interrupt = () => {};
    let onLine: (line: string) => void = () => {};
    const firstLine = new Promise<string>((resolve) => (onLine = resolve));
    let out = '';
    const io: CliIO = {
      stdout: {
        write: (c) => {
          out += c.toString();
          if (out.includes('\n')) onLine(out.slice(0, out.indexOf('\n')));
        },
      },
      stderr: { write: (c) => (log += c.toString()) },
      cwd,
      env,
      interrupted: new Promise<void>((resolve) => (interrupt = resolve)),
    };
    const exited = main([...args, ...extra], io);
    const endpoint = await Promise.race([firstLine, exited.then((code) => Promise.reject(new Error(`the server exited with ${code}: ${log}`)))]);
    return { endpoint, stop: async () => (interrupt(), await exited) };
  };
  let running = await start([]);
  const endpoint = running.endpoint;
  const port = Number(endpoint.slice(endpoint.lastIndexOf(':') + 1));
  let stopped = false;
  const cluster: KilnCluster = {
    endpoint,
    port,
    async stop() {
      if (stopped) return;
      stopped = true;
      await running.stop();
    },
    async restart() {
      await running.stop();
      running = await start(['--port', String(port)]);
    },
    log: () => log,
  };
  onTestFinished(() => cluster.stop());
  return cluster;
}

/** A scheduler config whose CAS and action cache mirror two storage nodes (as deploy/compose's does). */
export function mirroredStorageConfig(a: string, b: string): object {
  const node = (endpoint: string, keyspace: 'cas' | 'ac') => ({ kind: 'grpc', endpoint, keyspace, retries: 0 });
  return {
    instances: {
      '': {
        cas: { kind: 'mirrored', a: node(a, 'cas'), b: node(b, 'cas') },
        actionCache: { kind: 'completeness-checking', backend: { kind: 'mirrored', a: node(a, 'ac'), b: node(b, 'ac') } },
      },
    },
  };
}
