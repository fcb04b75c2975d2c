import { execFileSync, spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';

/**
 * Hosts made of network namespaces for tests that need several machines: each host a namespace with
 * `lo` and one veth link to a bridge in a switch namespace of its own, addressed from 198.18.0.0/24
 * (RFC 2544's range for network benchmarks) and with no default route, so nothing leaves the test's
 * hosts. Needs iproute2's `ip` and root (scripts/test-setup.d/40-iproute2.sh installs `ip`).
 */
export interface TestHost {
  /** The name the test gave it (`a`, `b`...). */
  readonly name: string;
  /** Its network namespace. */
  readonly namespace: string;
  /** Its IPv4 address on the test network, 198.18.0.N. */
  readonly address: string;
}

const NAMESPACE_PREFIX = 'kiln-net-';
const SUBNET = '198.18.0';
let networksMade = 0;

/** Whether `ip` (iproute2) is here and this process may make namespaces (root). */
export function networkNamespacesAvailable(): { ip: boolean; root: boolean } {
  return { ip: spawnSync('ip', ['-V']).status === 0, root: process.getuid?.() === 0 };
}

function ip(args: readonly string[]): string {
  try {
    return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`ip ${args.join(' ')}: ${err.stderr?.trim() || err.message}`);
  }
}

/** Kills every process left in `namespace` and deletes it (with its links). */
function removeNamespace(namespace: string): void {
  for (const pid of ip(['netns', 'pids', namespace]).split('\n').filter(Boolean)) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  ip(['netns', 'delete', namespace]);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the namespaces of test networks whose process no longer exists (a crashed earlier run). */
export function removeLeftoverNetworks(): string[] {
  const removed: string[] = [];
  for (const line of ip(['netns', 'list']).split('\n')) {
    const namespace = line.split(' ')[0]!;
    const owner = new RegExp(`^${NAMESPACE_PREFIX}(\\d+)-`).exec(namespace);
    if (!owner || processAlive(Number(owner[1]))) continue;
    removeNamespace(namespace);
    removed.push(namespace);
  }
  return removed;
}

export class TestNetwork {
  private removed = false;

  private constructor(
    private readonly hosts: ReadonlyMap<string, TestHost>,
    /** Every namespace made, the switch's included, in the order made. */
    private readonly namespaces: readonly string[],
  ) {}

  /**
   * Makes one host per name (addresses 198.18.0.1, .2... in that order) joined by a bridge. First
   * removes what crashed earlier runs left; on a failure halfway, removes what it made.
   */
  static create(names: readonly string[]): TestNetwork {
    if (names.length === 0 || names.length > 250) throw new Error(`a test network has 1 to 250 hosts, not ${names.length}`);
    removeLeftoverNetworks();
    const tag = `${NAMESPACE_PREFIX}${process.pid}-${networksMade++}`;
    const made: string[] = [];
    const addNamespace = (namespace: string) => {
      ip(['netns', 'add', namespace]);
      made.push(namespace);
      ip(['-n', namespace, 'link', 'set', 'lo', 'up']);
    };
    try {
      const switchNamespace = `${tag}-switch`;
      addNamespace(switchNamespace);
      ip(['-n', switchNamespace, 'link', 'add', 'bridge0', 'type', 'bridge']);
      ip(['-n', switchNamespace, 'link', 'set', 'bridge0', 'up']);
      const hosts = new Map<string, TestHost>();
      names.forEach((name, i) => {
        const host: TestHost = { name, namespace: `${tag}-${name}`, address: `${SUBNET}.${i + 1}` };
        addNamespace(host.namespace);
        // The switch's end is named after the host's index (names are per namespace, so no clash with other tests).
        const port = `port${i + 1}`;
        ip(['-n', switchNamespace, 'link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', host.namespace]);
        ip(['-n', switchNamespace, 'link', 'set', port, 'master', 'bridge0', 'up']);
        ip(['-n', host.namespace, 'address', 'add', `${host.address}/24`, 'dev', 'eth0']);
        ip(['-n', host.namespace, 'link', 'set', 'eth0', 'up']);
        hosts.set(name, host);
      });
      return new TestNetwork(hosts, made);
    } catch (e) {
      for (const namespace of made.reverse()) removeNamespace(namespace);
      throw e;
    }
  }

  host(name: string): TestHost {
    const host = this.hosts.get(name);
    if (!host) throw new Error(`no host ${name} on this test network (hosts: ${[...this.hosts.keys()].join(', ')})`);
    return host;
  }

  /** Starts `command ARGS` inside `host`'s namespace (`ip netns exec` runs it in place: the child's pid is the command's). */
  spawn(host: TestHost, command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
    return spawn('ip', ['netns', 'exec', host.namespace, command, ...args], options);
  }

  /** Kills whatever still runs on the hosts and removes every namespace and link; idempotent. */
  remove(): void {
    if (this.removed) return;
    this.removed = true;
    for (const namespace of [...this.namespaces].reverse()) removeNamespace(namespace);
  }
}
