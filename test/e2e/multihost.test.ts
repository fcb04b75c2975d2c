import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { opensslAvailable } from '../scheduler/security/test-certificates.js';
import { needTool } from '../setup/need-tool.js';
import { TestNetwork, networkNamespacesAvailable } from '../setup/test-network.js';
import { BAZEL_2, BAZEL_2_MISSING } from '../setup/bazel-2.js';
import { bytesBelow } from './e2e-workspace.js';
import { runOn, startMultihostCluster, type ClientRun, type MultihostCluster } from './multihost-cluster.js';
// @ts-expect-error: a benchmark script (plain JavaScript, no types); its action count is the one the build prints
import { actionCount } from '../../bench/build/generate.mjs';

// Four hosts made of network namespaces (198.18.0.1-4): A runs two storage nodes and the scheduler,
// whose CAS and action cache mirror over them, B and C an executor each, D the Kiln clients, every
// port that leaves a host over TLS with bearer tokens. (Bazel 2.1.0 cannot be
// a client of a cluster with auth on: it sends --remote_header on GetActionResult and later calls but
// not on its first, GetCapabilities, and has no --tls_client_certificate.)
// The generated workspace of bench/build/ at 100 packages (1,112 actions): about 70 s on two shared
// cores. bench/multihost/ runs the same hosts and times the builds.
const PACKAGES = 100;
// 11 genrules per package, and the shared tool twice: in the exec configuration and, as part of //..., the target's.
// The generator says how many actions a whole build has (a tenth of the packages call its macro).
const ACTIONS = actionCount(PACKAGES);
const REPO = fileURLToPath(new URL('../..', import.meta.url));

const namespaces = networkNamespacesAvailable();
const ready = [
  needTool('iproute2 (ip)', namespaces.ip, 'run scripts/test-setup.d/40-iproute2.sh (npm test does)'),
  needTool('root', namespaces.root, 'run the tests as root: the hosts are network namespaces (ip netns add)'),
  opensslAvailable(),
  needTool('the built kiln (dist/)', existsSync(join(REPO, 'dist/bundle/kiln.js')), 'npm run build'),
  needTool('Bazel 2.1.0', BAZEL_2 !== '', BAZEL_2_MISSING),
].every(Boolean);

describe.skipIf(!ready)('a secured cluster across four hosts (network namespaces)', () => {
  let network: TestNetwork | undefined;
  let cluster: MultihostCluster | undefined;
  let dir = '';
  let checkouts = 0;
  let reference = new Map<string, Buffer>();

  /** A fresh copy of the generated workspace with a HOME (so an output base) of its own. */
  const checkout = () => {
    const root = join(dir, `checkout-${++checkouts}`);
    cpSync(join(dir, 'template'), join(root, 'ws'), { recursive: true });
    return { ws: join(root, 'ws'), home: join(root, 'home') };
  };
  const kilnOnD = (where: { ws: string; home: string }, args: readonly string[]) =>
    runOn(network!, network!.host('d'), join(REPO, 'bin/kiln'), ['build', '--jobs=8', ...args, '//...'], where.ws, where.home);
  const secured = (flag: 'remote_executor' | 'remote_cache', token: string) => [
    `--${flag}=${cluster!.endpoint}`,
    `--tls_certificate=${cluster!.ca}`,
    `--remote_header=authorization=Bearer ${token}`,
  ];
  const expectOk = (run: ClientRun) => expect(run.code, run.output).toBe(0);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kiln-multihost-'));
    // The executors' work directories are below it, and the local runner runs actions as nobody.
    chmodSync(dir, 0o755);
    execFileSync(process.execPath, [join(REPO, 'bench/build/generate.mjs'), join(dir, 'template'), String(PACKAGES)]);
    network = TestNetwork.create(['a', 'b', 'c', 'd']);
    cluster = await startMultihostCluster({ network, dir, schedulerHost: 'a', executorHosts: ['b', 'c'], slots: 2 });
    expect(cluster.endpoint).toBe('grpcs://198.18.0.1:8980');
    const local = checkout();
    expectOk(await kilnOnD(local, []));
    reference = bytesBelow(join(local.ws, 'kiln-bin'));
    expect(reference.size).toBeGreaterThan(ACTIONS);
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    network?.remove();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('Kiln on D builds remotely; the executor on C is killed mid-build and the build finishes on B, byte-identical to a local build', {
    timeout: 180_000,
  }, async () => {
    const onB = cluster!.executors.get('b')!;
    const onC = cluster!.executors.get('c')!;
    const where = checkout();
    const build = kilnOnD(where, secured('remote_executor', cluster!.tokens.developer));
    // Mid-build: C has started a few actions of its own.
    await onC.waitFor(/runs action/, 5);
    let finished = false;
    void build.then(() => (finished = true));
    expect(finished).toBe(false);
    const ranOnBBefore = onB.log().match(/runs action/g)?.length ?? 0;
    onC.child.kill('SIGKILL');
    await onC.exited;
    const run = await build;
    expectOk(run);
    expect(run.output).toMatch(new RegExp(`INFO: ${ACTIONS} processes: ${ACTIONS} remote\\.`));
    expect(onB.log().match(/runs action/g)?.length ?? 0).toBeGreaterThan(ranOnBBefore);
    expect(bytesBelow(join(where.ws, 'kiln-bin'))).toEqual(reference);
  });

  it('a second Kiln checkout on D gets 100% remote cache hits', { timeout: 60_000 }, async () => {
    const where = checkout();
    const run = await kilnOnD(where, secured('remote_executor', cluster!.tokens.developer));
    expectOk(run);
    expect(run.output).toMatch(new RegExp(`INFO: ${ACTIONS} processes: ${ACTIONS} remote cache hit\\.`));
    expect(bytesBelow(join(where.ws, 'kiln-bin'))).toEqual(reference);
  });

  it('a storage node killed mid-build and restarted loses nothing: the build succeeds and the next checkout hits every action', {
    timeout: 180_000,
  }, async () => {
    const onB = cluster!.executors.get('b')!;
    // Twenty packages changed: their chains run on B while storage-2 dies and comes back.
    const edited = (where: { ws: string; home: string }) => {
      for (let p = 20; p < 40; p++) writeFileSync(join(where.ws, `g00/pkg000${p}/input.txt`), `edited while storage fails, ${p}\n`);
      return where;
    };
    const where = edited(checkout());
    const ranBefore = onB.log().match(/runs action/g)?.length ?? 0;
    const build = kilnOnD(where, secured('remote_executor', cluster!.tokens.developer));
    await onB.waitFor(/runs action/, ranBefore + 5);
    const node = cluster!.storage.get('storage-2')!;
    node.child.kill('SIGKILL');
    await node.exited;
    await cluster!.restartStorage('storage-2');
    const run = await build;
    expectOk(run);
    expect(run.output).toMatch(new RegExp(`INFO: ${ACTIONS} processes: .*remote`));
    const after = edited(checkout());
    const again = await kilnOnD(after, secured('remote_executor', cluster!.tokens.developer));
    expectOk(again);
    expect(again.output).toMatch(new RegExp(`INFO: ${ACTIONS} processes: ${ACTIONS} remote cache hit\\.`));
    expect(bytesBelow(join(after.ws, 'kiln-bin'))).toEqual(bytesBelow(join(where.ws, 'kiln-bin')));
  });

  it('a read-only token builds from the cache and cannot write the action cache; a cache-writer token can', { timeout: 120_000 }, async () => {
    const readOnly = secured('remote_cache', cluster!.tokens.reader);
    const hits = await kilnOnD(checkout(), readOnly);
    expectOk(hits);
    expect(hits.output).toMatch(new RegExp(`INFO: ${ACTIONS} processes: ${ACTIONS} remote cache hit\\.`));

    // A changed leaf: its package's chain runs on D, and the reader's upload of the results is refused.
    const changed = (where: { ws: string; home: string }) => {
      writeFileSync(join(where.ws, 'g00/pkg00003/input.txt'), 'changed on D\n');
      return where;
    };
    const refused = await kilnOnD(changed(checkout()), readOnly);
    expectOk(refused);
    expect(refused.output).toMatch(/WARNING: Remote Cache: .*PERMISSION_DENIED/);
    const ranLocally = (run: ClientRun) => ACTIONS - Number(/ (\d+) remote cache hit/.exec(run.output)?.[1] ?? 0);
    const changedActions = ranLocally(refused);
    expect(changedActions).toBeGreaterThan(0);
    // Nothing of it reached the action cache: the next reader runs the same actions again.
    expect(ranLocally(await kilnOnD(changed(checkout()), readOnly))).toBe(changedActions);

    const writer = await kilnOnD(changed(checkout()), secured('remote_cache', cluster!.tokens.ci));
    expectOk(writer);
    expect(writer.output).not.toMatch(/PERMISSION_DENIED/);
    const afterWriter = await kilnOnD(changed(checkout()), readOnly);
    expectOk(afterWriter);
    expect(afterWriter.output).toMatch(new RegExp(`INFO: ${ACTIONS} processes: ${ACTIONS} remote cache hit\\.`));
  });

  it('Bazel 2.1.0 on D, authenticated by a service account, uploads its results and a second Bazel checkout gets 100% remote cache hits', {
    timeout: 300_000,
  }, async () => {
    // Bazel 2.1.0 sends no --remote_header on ByteStream; --google_credentials puts an access token
    // from the cluster's token endpoint on every call instead.
    const bazelOnD = (where: { ws: string; home: string }) =>
      runOn(
        network!,
        network!.host('d'),
        BAZEL_2,
        [
          `--output_user_root=${join(where.home, '..', 'bazel-root')}`,
          '--batch',
          'build',
          '--noshow_progress',
          '--color=no',
          '--symlink_prefix=/',
          '--spawn_strategy=local',
          '--jobs=8',
          `--remote_cache=${cluster!.endpoint}`,
          `--tls_certificate=${cluster!.ca}`,
          `--google_credentials=${cluster!.serviceAccountKey}`,
          '//...',
        ],
        where.ws,
        where.home,
      );
    const first = await bazelOnD(checkout());
    expectOk(first);
    expect(first.output).not.toMatch(/Remote Cache|UNAUTHENTICATED|PERMISSION_DENIED/);
    const second = checkout();
    const hits = await bazelOnD(second);
    expectOk(hits);
    const counted = /INFO: (\d+) processes: (\d+) remote cache hit\./.exec(hits.output);
    expect(counted, hits.output).not.toBeNull();
    expect(Number(counted![2])).toBe(Number(counted![1]));
    expect(Number(counted![1])).toBeGreaterThan(PACKAGES * 11);
    // Its outputs are Kiln's, byte for byte.
    const outputBases = join(second.home, '..', 'bazel-root');
    const bin = readdirSync(outputBases)
      .map((d) => join(outputBases, d, 'execroot', 'build_bench', 'bazel-out', 'k8-fastbuild', 'bin'))
      .find((d) => existsSync(d));
    expect(bin).toBeDefined();
    const bazelOutputs = bytesBelow(bin!);
    expect(bazelOutputs.size).toBeGreaterThan(PACKAGES * 11);
    for (const [path, bytes] of bazelOutputs) expect(reference.get(path), path).toEqual(bytes);
  });
});
