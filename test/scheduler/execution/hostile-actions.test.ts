import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeMessage, googleRpc, reapi, type Digest } from '../../../src/core/index.js';
import { detectSandboxSupport, nativeSpawnerBinary } from '../../../src/core/sandbox/index.js';
import { DockerRunner } from '../../../executor/runners/docker-runner.js';
import { LocalRunner } from '../../../executor/runners/local-runner.js';
import type { Runner } from '../../../executor/runners/runner.js';
import { must } from '../cache-server-fixture.js';
import { execute, shCommand, startClusterForTest, type TestCluster } from './cluster-fixture.js';
import { needTool } from '../../setup/need-tool.js';

/**
 * Hostile actions and clients against a real scheduler and executor, with each runner: an action
 * must never get the executor to read, create or follow anything outside its build directory, nor
 * change what another action sees.
 */
const dockerHost = process.env.KILN_DOCKER_HOST ?? '';
const haveDocker = needTool('Docker', dockerHost !== '', 'KILN_DOCKER_HOST is unset; run scripts/test-setup.d/20-docker.sh (npm test does)');
const baseImage = process.env.KILN_BASE_IMAGE ?? 'kiln/base:latest';
const sandbox = await detectSandboxSupport();
const haveSandbox = needTool(
  'the namespace sandbox (bubblewrap)',
  sandbox.available,
  `${sandbox.available ? '' : sandbox.reason} (run scripts/test-setup.d/10-bubblewrap.sh)`,
);

const nativeHere = needTool(
  'the native sandbox helper',
  nativeSpawnerBinary() !== undefined,
  'npm run build compiles it where a C compiler is (scripts/test-setup.d/05-c-compiler.sh)',
);
const runners: [name: string, make: () => Promise<Runner>][] = [];
if (nativeHere) runners.push(['local runner (sandbox)', () => LocalRunner.create({ log: (m) => expect.fail(`the sandbox is required here: ${m}`) })]);
if (haveSandbox)
  runners.push([
    'local runner (bubblewrap sandbox)',
    () => LocalRunner.create({ nativeSandbox: false, log: (m) => expect.fail(`the sandbox is required here: ${m}`) }),
  ]);
runners.push(['local runner (plain process)', () => LocalRunner.create({ sandbox: 'off' })]);
if (haveDocker) {
  runners.push(['docker runner', async () => new DockerRunner({ dockerHost, defaultImage: baseImage })]);
  runners.push(['docker runner as uid 0', async () => new DockerRunner({ dockerHost, defaultImage: baseImage, user: '0:0' })]);
}

/** A host directory outside every build directory, with a root-only secret: never read, created in or changed. */
let canary: string;
const SECRET = 'CANARY-SECRET-CONTENT';
const snapshot = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    const stat = statSync(path);
    const line = `${path} ${stat.mode.toString(8)} ${stat.mtimeMs}`;
    return e.isDirectory() ? [line, ...snapshot(path)] : [`${line} ${readFileSync(path, 'utf8')}`];
  });
let before: string[];
beforeAll(() => {
  canary = mkdtempSync(join(tmpdir(), 'kiln-canary-'));
  writeFileSync(join(canary, 'secret'), SECRET, { mode: 0o600 });
  mkdirSync(join(canary, 'sub'));
  writeFileSync(join(canary, 'sub', 'inner'), SECRET, { mode: 0o600 });
  chmodSync(canary, 0o700);
  before = snapshot(canary);
});
afterAll(() => {
  try {
    expect(snapshot(canary)).toEqual(before);
  } finally {
    rmSync(canary, { recursive: true, force: true });
  }
});

async function withRunner(make: () => Promise<Runner>): Promise<{ cluster: TestCluster; runner: Runner }> {
  const cluster = await startClusterForTest();
  const runner = await make();
  await cluster.addExecutor({ runner, slots: 1 });
  return { cluster, runner };
}

async function uploadMessage<I>(cluster: TestCluster, codec: { encode(m: I): Buffer }, message: I): Promise<Digest> {
  return cluster.upload(codec.encode(message));
}

async function actionWithRoot(cluster: TestCluster, command: reapi.CommandInit, inputRootDigest: Digest): Promise<Digest> {
  const commandDigest = await uploadMessage(cluster, reapi.Command, command);
  const action = encodeMessage(reapi.Action, { commandDigest, inputRootDigest });
  await cluster.upload(action.data);
  return action.digest;
}

async function readBlob(cluster: TestCluster, digest: reapi.Digest): Promise<string> {
  const res = await must(cluster.cas, cluster.cas.BatchReadBlobs, { instanceName: '', digests: [digest] });
  return res.responses[0]!.data.toString();
}

describe.each(runners)('hostile actions, %s', (_name, make) => {
  let runner: Runner | undefined;
  afterAll(() => runner?.close?.());

  it('outputs under a symlinked parent are missing; output symlinks are reported, never followed', { timeout: 60_000 }, async () => {
    const setup = await withRunner(make);
    runner = setup.runner;
    const { cluster } = setup;
    const actionDigest = await cluster.action(
      // The executor made the declared outputs' parents (d, d/..., real/e): the action swaps them for symlinks.
      shCommand(`rm -r d real && ln -s ${canary} d && ln -s ${canary}/secret f && mkdir real && ln -s ${canary} real/e && ln -s ${canary}/sub real/s`, {
        outputPaths: ['d', 'd/secret', 'd/sub', 'f', 'real', 'real/e/secret', 'real/s'],
      }),
    );
    const run = await execute(cluster, { instanceName: '', actionDigest });
    expect(run.response?.status?.code ?? 0).toBe(googleRpc.Code.OK);
    const result = run.response!.result!;
    expect(result.exitCode).toBe(0);
    expect(result.outputFiles).toEqual([]);
    expect(result.outputSymlinks.map((s) => [s.path, s.target])).toEqual([
      ['d', canary],
      ['f', `${canary}/secret`],
      ['real/s', `${canary}/sub`],
    ]);
    expect(result.outputDirectories.map((d) => d.path)).toEqual(['real']);
    const tree = reapi.Tree.decode(Buffer.from(await readBlob(cluster, result.outputDirectories[0]!.treeDigest!), 'latin1'));
    expect(tree.root!.files).toEqual([]);
    expect(tree.root!.directories).toEqual([]);
    expect(tree.root!.symlinks.map((s) => s.name)).toEqual(['e', 's']);
  });

  it('an action cannot change the input files later actions get (nor the executor file cache)', { timeout: 60_000 }, async () => {
    const setup = await withRunner(make);
    runner = setup.runner;
    const { cluster } = setup;
    const files = { f: 'original input\n' };
    // Everything a hostile action may try: write its input in place, chmod it first, and rewrite the cache behind it.
    const poison = await cluster.action(
      shCommand('chmod u+w f 2>/dev/null; echo POISON > f 2>/dev/null; for c in ../../cache/*; do chmod u+w "$c"; echo POISON > "$c"; done 2>/dev/null; true', {
        outputPaths: [],
      }),
      files,
    );
    const first = await execute(cluster, { instanceName: '', actionDigest: poison });
    expect(first.response?.status?.code ?? 0).toBe(googleRpc.Code.OK);
    const reader = await cluster.action(shCommand('cat f', { outputPaths: [] }), files);
    const second = await execute(cluster, { instanceName: '', actionDigest: reader });
    expect(second.response?.status?.code ?? 0).toBe(googleRpc.Code.OK);
    expect(await readBlob(cluster, second.response!.result!.stdoutDigest!)).toBe('original input\n');
    // The result the action cache now holds is the true one.
    const cached = await must(cluster.ac, cluster.ac.GetActionResult, { instanceName: '', actionDigest: reader });
    expect(await readBlob(cluster, cached.stdoutDigest!)).toBe('original input\n');
  });

  it('a chain of input symlinks that resolves to the host root is refused; nothing is made or read on the host', { timeout: 60_000 }, async () => {
    const setup = await withRunner(make);
    runner = setup.runner;
    const { cluster } = setup;
    // a1/.../a10/s -> ../../.. ; y -> a1/.../a10/s/ + 20 x '..': the host's / for a build directory a few levels deep.
    let child = await uploadMessage(cluster, reapi.Directory, { symlinks: [{ name: 's', target: '../../..' }] });
    for (let i = 10; i >= 2; i--) child = await uploadMessage(cluster, reapi.Directory, { directories: [{ name: `a${i}`, digest: child }] });
    const chain = `${Array.from({ length: 10 }, (_, i) => `a${i + 1}`).join('/')}/s/${Array(20).fill('..').join('/')}`;
    const root = await uploadMessage(cluster, reapi.Directory, { directories: [{ name: 'a1', digest: child }], symlinks: [{ name: 'y', target: chain }] });
    const actionDigest = await actionWithRoot(cluster, shCommand('true', { outputPaths: [`y${canary}/made/file`, `y${canary}/secret`] }), root);
    const run = await execute(cluster, { instanceName: '', actionDigest });
    expect(run.error?.code).toBe(googleRpc.Code.INVALID_ARGUMENT);
    expect(run.error?.details).toMatch(/symlink "y" -> .* climbs above its own directory/);
    expect(snapshot(canary)).toEqual(before);
  });
});

describe('requests REAPI forbids are INVALID_ARGUMENT, before any executor sees them', () => {
  const cases: [string, Partial<reapi.CommandInit>, RegExp][] = [
    ['an output path with a trailing slash', { outputPaths: ['a/'] }, /output_paths: "a\/" must not end with a slash/],
    ['an output path a//b', { outputPaths: ['a//b'] }, /output_paths: "a\/\/b" has an empty component/],
    ['the output path .', { outputPaths: ['.'] }, /output_paths: "\." has a '\.' component/],
    ['an absolute output path', { outputPaths: ['/etc/shadow'] }, /output_paths: "\/etc\/shadow" must be relative/],
    ['an output path with ..', { outputPaths: ['../x'] }, /output_paths: "\.\.\/x" has a '\.\.' component/],
    ['unsorted output paths', { outputPaths: ['b', 'a'] }, /output_paths: not sorted/],
    ['duplicate output paths', { outputPaths: ['a', 'a'] }, /output_paths: "a" is listed twice/],
    [
      'unsorted environment variables',
      {
        environmentVariables: [
          { name: 'PATH', value: '/bin' },
          { name: 'A', value: '1' },
        ],
      },
      /environment_variables: not sorted/,
    ],
    [
      'duplicate environment variables',
      {
        environmentVariables: [
          { name: 'A', value: '1' },
          { name: 'A', value: '2' },
        ],
      },
      /environment_variables: "A" is listed twice/,
    ],
  ];
  it.each(cases)('%s', async (_what, fields, message) => {
    const cluster = await startClusterForTest();
    await cluster.addExecutor();
    const actionDigest = await cluster.action({ ...shCommand('true'), ...fields });
    const run = await execute(cluster, { instanceName: '', actionDigest });
    expect(run.error?.code).toBe(googleRpc.Code.INVALID_ARGUMENT);
    expect(run.error?.details).toMatch(message);
  });

  it('an input tree 3,000 directories deep: a short INVALID_ARGUMENT', async () => {
    const cluster = await startClusterForTest();
    await cluster.addExecutor();
    let child = await uploadMessage(cluster, reapi.Directory, {});
    const blobs: { digest: Digest; data: Buffer }[] = [];
    for (let i = 0; i < 3000; i++) {
      const { digest, data } = encodeMessage(reapi.Directory, { directories: [{ name: 'd', digest: child }] });
      blobs.push({ digest, data });
      child = digest;
    }
    for (let i = 0; i < blobs.length; i += 500) {
      await must(cluster.cas, cluster.cas.BatchUpdateBlobs, { instanceName: '', requests: blobs.slice(i, i + 500) });
    }
    const actionDigest = await actionWithRoot(cluster, shCommand('true', { outputPaths: [] }), child);
    const run = await execute(cluster, { instanceName: '', actionDigest });
    expect(run.error?.code).toBe(googleRpc.Code.INVALID_ARGUMENT);
    expect(run.error?.details).toMatch(/the input tree nests directories deeper than 512 levels/);
    expect(run.error!.details.length).toBeLessThan(400);
  });
});
