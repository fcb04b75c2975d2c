import { execFileSync, spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { needTool } from './need-tool.js';
import { TestNetwork, networkNamespacesAvailable, removeLeftoverNetworks } from './test-network.js';

const namespaces = networkNamespacesAvailable();
const ready = [
  needTool('iproute2 (ip)', namespaces.ip, 'run scripts/test-setup.d/40-iproute2.sh (npm test does)'),
  needTool('root', namespaces.root, 'run the tests as root: the hosts are network namespaces (ip netns add)'),
].every(Boolean);

const namespaceList = () => execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });

describe.skipIf(!ready)('TestNetwork', () => {
  const made: TestNetwork[] = [];
  afterEach(() => {
    for (const network of made.splice(0)) network.remove();
  });

  it('joins its hosts on 198.18.0.0/24 with no route elsewhere, and removes every namespace', () => {
    const network = TestNetwork.create(['a', 'b']);
    made.push(network);
    const [a, b] = [network.host('a'), network.host('b')];
    expect([a.address, b.address]).toEqual(['198.18.0.1', '198.18.0.2']);
    expect(execFileSync('ip', ['-n', b.namespace, 'route', 'show'], { encoding: 'utf8' }).trim()).toBe(
      '198.18.0.0/24 dev eth0 proto kernel scope link src 198.18.0.2',
    );
    // b reaches a over the bridge: a TCP connection to a port nobody listens on is refused by a's kernel
    // (an unreachable host would time out instead).
    const probe = spawnSync(
      'ip',
      [
        'netns',
        'exec',
        b.namespace,
        process.execPath,
        '-e',
        `require('net').connect(9, '${a.address}').on('error', (e) => { console.log(e.code); process.exit(0); })`,
      ],
      { encoding: 'utf8', timeout: 10_000 },
    );
    expect(probe.stdout.trim()).toBe('ECONNREFUSED');
    network.remove();
    expect(namespaceList()).not.toContain(`${a.namespace.slice(0, -1)}`);
  });

  it('removes the namespaces a dead process of its naming left, and no others', () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    const leftover = `kiln-net-${dead}-0-a`;
    const alive = `kiln-net-${process.pid}-999-a`;
    execFileSync('ip', ['netns', 'add', leftover]);
    execFileSync('ip', ['netns', 'add', alive]);
    try {
      expect(removeLeftoverNetworks()).toEqual([leftover]);
      expect(namespaceList()).toContain(alive);
    } finally {
      for (const namespace of [leftover, alive]) spawnSync('ip', ['netns', 'delete', namespace]);
    }
  });
});
