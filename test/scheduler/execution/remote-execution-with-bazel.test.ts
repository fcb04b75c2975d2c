import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerRunner } from '../../../executor/runners/docker-runner.js';
import { startTestCluster, type TestCluster } from './cluster-fixture.js';
import { BAZEL_2, BAZEL_2_MISSING, runBazel2 } from '../../setup/bazel-2.js';
import { needTool } from '../../setup/need-tool.js';

// Bazel 2.1.0 (scripts/test-setup.d/30-bazel.sh) builds a genrule workspace with
// --remote_executor against Kiln's scheduler and an in-process executor (local runner, and the
// Docker runner when KILN_DOCKER_HOST names a running engine); the outputs match a local build byte for
// byte, and after `bazel clean` the rebuild is served from the cache.
const DOCKER_HOST = process.env['KILN_DOCKER_HOST'] ?? process.env['DOCKER_HOST'] ?? '';
const NO_DOCKER = 'KILN_DOCKER_HOST is not set: run scripts/test-setup.d/20-docker.sh (or npm test) for the Docker runner';

const BUILD = `
genrule(name = "hello", outs = ["hello.txt"], cmd = "echo hello from kiln > $@")
genrule(name = "twice", srcs = [":hello"], outs = ["twice.txt"], cmd = "cat $< $< > $@")
genrule(name = "pair", srcs = ["input.txt"], outs = ["upper.txt", "count.txt"],
        cmd = "tr a-z A-Z < $< > $(location upper.txt) && wc -c < $< > $(location count.txt)")
genrule(name = "tool_user", srcs = ["tool.sh", "input.txt"], outs = ["tooled.txt"], cmd = "sh $(location tool.sh) $(location input.txt) > $@")
`;
const OUTPUTS = ['hello.txt', 'twice.txt', 'upper.txt', 'count.txt', 'tooled.txt'];
const ACTIONS = 4;

describe('Bazel 2.1.0 --remote_executor against kiln', () => {
  if (!needTool('Bazel 2.1.0', BAZEL_2 !== '', BAZEL_2_MISSING)) return;
  let root: string;
  let cluster: TestCluster | undefined;
  let expected: Map<string, Buffer>;
  const COMMON = ['--noshow_progress', '--color=no', '--curses=no'];

  const run = (args: string[]) => runBazel2(root, args);
  const readOutputs = async () => new Map(await Promise.all(OUTPUTS.map(async (f) => [f, await readFile(join(root, 'ws', 'bazel-bin', f))] as const)));

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'kiln-bazel-rbe-'));
    await Promise.all(['ws', 'home', 'tmp'].map((d) => mkdir(join(root, d))));
    await writeFile(join(root, 'ws', 'WORKSPACE'), 'workspace(name = "rbe")\n');
    await writeFile(join(root, 'ws', 'BUILD'), BUILD);
    await writeFile(join(root, 'ws', 'input.txt'), 'some input for the pair rule\n');
    await writeFile(join(root, 'ws', 'tool.sh'), '#!/bin/sh\ntr a-z n-za-m < "$1"\n');
    const local = await run(['build', ...COMMON, '//...']);
    expect(local.code, local.output).toBe(0);
    expected = await readOutputs();
    expect((await run(['clean'])).code).toBe(0);
  }, 600_000);

  afterAll(async () => {
    await cluster?.stop();
    if (root) {
      await run(['shutdown']).catch(() => undefined);
      await new Promise((resolve) => spawn('chmod', ['-R', 'u+w', root], { stdio: 'ignore' }).on('close', resolve));
      await rm(root, { recursive: true, force: true });
    }
  });

  /** Remote build, then clean and a rebuild served from the cache; both byte-identical to the local build. */
  const remoteBuilds = async () => {
    const remote = ['--remote_executor=grpc://' + cluster!.address, '--remote_timeout=60', ...COMMON];
    const first = await run(['build', ...remote, '//...']);
    expect(first.code, first.output).toBe(0);
    expect(first.output).toMatch(new RegExp(`INFO: ${ACTIONS} processes: ${ACTIONS} remote`));
    const built = await readOutputs();
    for (const f of OUTPUTS) expect(built.get(f)!.equals(expected.get(f)!), f).toBe(true);
    expect((await run(['clean'])).code).toBe(0);
    const second = await run(['build', ...remote, '//...']);
    expect(second.code, second.output).toBe(0);
    expect(second.output).toMatch(new RegExp(`INFO: ${ACTIONS} processes: ${ACTIONS} remote cache hit`));
    const again = await readOutputs();
    for (const f of OUTPUTS) expect(again.get(f)!.equals(expected.get(f)!), f).toBe(true);
    expect((await run(['clean'])).code).toBe(0);
  };

  it('local runner: remote build identical to the local one, then entirely from the cache', { timeout: 900_000 }, async () => {
    cluster = await startTestCluster();
    await cluster.addExecutor({ slots: 2 });
    await remoteBuilds();
    await cluster.stop();
    cluster = undefined;
  });

  if (!needTool('Docker', DOCKER_HOST !== '', NO_DOCKER)) return;
  it('docker runner: remote build identical to the local one, then entirely from the cache', { timeout: 900_000 }, async () => {
    const docker = new DockerRunner({ dockerHost: DOCKER_HOST });
    await docker.ping();
    cluster = await startTestCluster();
    await cluster.addExecutor({ slots: 2, runner: docker });
    await remoteBuilds();
    await cluster.stop();
    cluster = undefined;
  });
});
