import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { needTool } from '../setup/need-tool.js';
import { E2eWorkspace, tempDir } from './e2e-workspace.js';
import { startKilnCluster } from './kiln-cluster.js';

const REPO = join(import.meta.dirname, '../..');
const HAS_BWRAP = spawnSync('bwrap', ['--version']).status === 0;

function examplesCopy(): E2eWorkspace {
  const ws = new E2eWorkspace({});
  cpSync(join(REPO, 'examples'), ws.root, { recursive: true, filter: (src) => !/\/kiln-[a-z]+$/.test(src) });
  return ws;
}

/** Every file under kiln-bin (through the convenience symlink) with its SHA-256 and mode. */
function outputsOf(ws: E2eWorkspace): Record<string, string> {
  const root = join(ws.root, 'kiln-bin');
  const files: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else files[relative(root, path)] = `${createHash('sha256').update(readFileSync(path)).digest('hex')} ${(statSync(path).mode & 0o777).toString(8)}`;
    }
  };
  walk(root);
  return files;
}

const summary = (stderr: string) => /INFO: \d+ process(?:es)?[:.][^\n]*/.exec(stderr)?.[0];

/** Builds examples/ on the cluster and locally, each in its own checkout; checks every action ran remotely and the bytes agree. */
async function buildExamplesRemotelyAndLocally(endpoint: string): Promise<{ remote: E2eWorkspace; local: E2eWorkspace }> {
  const remote = examplesCopy();
  const built = await remote.kiln(['build', `--remote_executor=${endpoint}`, '//...']);
  expect(built.code, built.stderr).toBe(0);
  expect(summary(built.stderr)).toBe('INFO: 10 processes: 2 internal, 8 remote.');
  const local = examplesCopy();
  expect((await local.kiln(['build', '--spawn_strategy=local', '//...'])).code).toBe(0);
  expect(outputsOf(remote)).toEqual(outputsOf(local));
  expect(Object.keys(outputsOf(remote)).length).toBeGreaterThanOrEqual(8);
  return { remote, local };
}

describe('kiln build against kiln cluster up (REAPI)', () => {
  it('builds examples/ remotely with byte-identical outputs to local and sandboxed builds; a second checkout gets only remote cache hits', {
    timeout: 120_000,
  }, async () => {
    const cluster = await startKilnCluster();
    const { local } = await buildExamplesRemotelyAndLocally(cluster.endpoint);
    if (HAS_BWRAP) {
      const sandboxed = examplesCopy();
      const run = await sandboxed.kiln(['build', '--spawn_strategy=sandboxed', '//...']);
      expect(run.code, run.stderr).toBe(0);
      expect(outputsOf(sandboxed)).toEqual(outputsOf(local));
    }

    // Another path, another output base: every action is answered by the cluster's cache.
    const second = examplesCopy();
    const cached = await second.kiln(['build', `--remote_executor=${cluster.endpoint}`, '//...']);
    // Every action a cache can answer is answered by the cluster's; the in-process template expansion (internal) is never cached remotely, as in Bazel.
    expect(cached.code, cached.stderr).toBe(0);
    expect(summary(cached.stderr)).toBe('INFO: 10 processes: 8 remote cache hit, 2 internal.');
    expect(outputsOf(second)).toEqual(outputsOf(local));
    // kiln run works on outputs that came from the cluster.
    const hello = await second.kiln(['run', `--remote_executor=${cluster.endpoint}`, '//app:hello', '--', 'remote']);
    expect(hello.stdout).toBe('hi, remote!\n');

    // --remote_cache alone: the cluster as a cache for local actions.
    const cacheOnly = examplesCopy();
    const viaCache = await cacheOnly.kiln(['build', `--remote_cache=${cluster.endpoint}`, '--spawn_strategy=local', '//...']);
    expect(viaCache.code, viaCache.stderr).toBe(0);
    expect(summary(viaCache.stderr)).toBe('INFO: 10 processes: 8 remote cache hit, 2 internal.');
  });

  const TAGGED = {
    'MODULE.bazel': 'module(name = "tagged")\n',
    'pkg/in.txt': 'hello\n',
    'pkg/BUILD': [
      'genrule(name = "up", srcs = ["in.txt"], outs = ["up.txt"], cmd = "tr a-z A-Z < $< > $@")',
      'genrule(name = "twice", srcs = [":up"], outs = ["twice.txt"], cmd = "cat $< $< > $@; echo $(location :up) >> $@")',
      'genrule(name = "pinned", outs = ["pinned.txt"], cmd = "echo local > $@", tags = ["local"])',
      'genrule(name = "unremote", outs = ["unremote.txt"], cmd = "echo no-remote > $@", tags = ["no-remote"])',
      'genrule(name = "unexec", outs = ["unexec.txt"], cmd = "echo no-remote-exec > $@", tags = ["no-remote-exec"])',
      '',
    ].join('\n'),
  };

  it('pins tagged actions: local and no-remote run here uncached remotely, no-remote-exec runs here and is cached remotely', { timeout: 60_000 }, async () => {
    const cluster = await startKilnCluster();
    const ws = new E2eWorkspace(TAGGED);
    const run = await ws.kiln(['build', `--remote_executor=${cluster.endpoint}`, '--spawn_strategy=remote,local', '//pkg:all']);
    expect(run.code, run.stderr).toBe(0);
    expect(summary(run.stderr)).toBe('INFO: 5 processes: 2 remote, 3 local.');
    expect(ws.read('kiln-bin/pkg/twice.txt')).toBe('HELLO\nHELLO\nbazel-out/k8-fastbuild/bin/pkg/up.txt\n');

    const again = new E2eWorkspace(TAGGED);
    const second = await again.kiln(['build', `--remote_executor=${cluster.endpoint}`, '--spawn_strategy=remote,local', '//pkg:all']);
    expect(second.code, second.stderr).toBe(0);
    expect(summary(second.stderr)).toBe('INFO: 5 processes: 3 remote cache hit, 2 local.');
    expect(second.executed).toEqual(['//pkg:pinned', '//pkg:unremote']);

    // --strategy=Genrule=... chooses per mnemonic; --noremote_accept_cached runs again remotely.
    const third = new E2eWorkspace(TAGGED);
    const rerun = await third.kiln([
      'build',
      `--remote_executor=${cluster.endpoint}`,
      '--noremote_accept_cached',
      '--strategy=Genrule=remote,local',
      '//pkg:all',
    ]);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(summary(rerun.stderr)).toBe('INFO: 5 processes: 2 remote, 3 local.');
  });

  it('without the cluster: the error names the endpoint (exit 34); --remote_local_fallback builds locally', { timeout: 60_000 }, async () => {
    const cluster = await startKilnCluster();
    const endpoint = cluster.endpoint;
    await cluster.stop();
    const ws = new E2eWorkspace(TAGGED);
    const failed = await ws.kiln(['build', `--remote_executor=${endpoint}`, '--remote_retries=1', '//pkg:up']);
    expect(failed.code).toBe(34);
    expect(failed.stderr).toContain(`ERROR: Failed to query remote execution capabilities from ${endpoint}: UNAVAILABLE`);
    const fallback = await ws.kiln([
      'build',
      `--remote_executor=${endpoint}`,
      '--remote_retries=1',
      '--remote_local_fallback',
      '--spawn_strategy=remote,local',
      '//pkg:up',
    ]);
    expect(fallback.code, fallback.stderr).toBe(0);
    expect(fallback.stderr).toContain(`WARNING: Failed to query remote execution capabilities from ${endpoint}`);
    expect(summary(fallback.stderr)).toBe('INFO: 1 process: 1 local.');
    expect(ws.read('kiln-bin/pkg/up.txt')).toBe('HELLO\n');
    // A remote cache that is down is only a warning.
    const cacheDown = await new E2eWorkspace(TAGGED).kiln(['build', `--remote_cache=${endpoint}`, '--remote_retries=0', '--spawn_strategy=local', '//pkg:up']);
    expect(cacheDown.code, cacheDown.stderr).toBe(0);
    expect(cacheDown.stderr).toMatch(
      /WARNING: Failed to query remote cache capabilities from grpc:\/\/127\.0\.0\.1:\d+: UNAVAILABLE.*; building without the remote cache/,
    );
  });

  it('rejects malformed remote flags naming the flag (exit 2)', async () => {
    const ws = new E2eWorkspace(TAGGED);
    const bad = async (flag: string) => {
      const run = await ws.kiln(['build', flag, '//pkg:up']);
      expect(run.code).toBe(2);
      return run.stderr;
    };
    expect(await bad('--remote_executor=http://127.0.0.1:1')).toMatch(/ERROR: --remote_executor=http:\/\/127\.0\.0\.1:1: HTTP caches are not supported/);
    expect(await bad('--remote_executor=grpc://127.0.0.1')).toMatch(/a grpc:\/\/ endpoint needs a port/);
    expect(await bad('--remote_cache=unix:relative.sock')).toMatch(/needs an absolute path/);
    expect(await bad('--remote_header=novalue')).toMatch(/--remote_header=novalue: expected NAME=VALUE/);
    expect(await bad('--remote_default_exec_properties=x')).toMatch(/expected NAME=VALUE/);
    expect(await bad('--dynamic_local_strategy=remote')).toContain(
      "ERROR: --dynamic_local_strategy=remote: 'remote' is not a local strategy of dynamic execution; valid values are 'sandboxed' (alias 'linux-sandbox') and 'local' (alias 'standalone')",
    );
    expect(await bad('--dynamic_local_strategy=Genrule=worker')).toMatch(/--dynamic_local_strategy=Genrule=worker: 'worker' is not a local strategy/);
    expect(await bad('--dynamic_remote_strategy=local')).toMatch(
      /ERROR: --dynamic_remote_strategy=local: 'local' is not a remote strategy of dynamic execution; valid values are 'remote'/,
    );
  });

  it('recovers from a server restarted mid-build, and re-uploads what the server lost', { timeout: 90_000 }, async () => {
    const cluster = await startKilnCluster();
    const ws = new E2eWorkspace({
      'MODULE.bazel': '',
      'pkg/in.txt': 'data\n',
      'pkg/BUILD': [
        'genrule(name = "first", srcs = ["in.txt"], outs = ["first.txt"], cmd = "cp $< $@")',
        // Slow enough that the restart lands while it runs on the cluster.
        'genrule(name = "slow", srcs = [":first", "in.txt"], outs = ["slow.txt"], cmd = "sleep 2; cat $(SRCS) > $@")',
        '',
      ].join('\n'),
    });
    let restarted: Promise<void> | undefined;
    const run = await ws.kiln(['build', `--remote_executor=${cluster.endpoint}`, '//pkg:slow'], ws.root, (stderr) => {
      // Once the slow action is under way remotely, restart the cluster (memory storage: every blob is lost).
      if (!restarted && stderr.includes('Executing genrule //pkg:slow')) restarted = cluster.restart();
      return false;
    });
    await restarted;
    expect(run.code, run.stderr).toBe(0);
    expect(ws.read('kiln-bin/pkg/slow.txt')).toBe('data\ndata\n');
    expect(summary(run.stderr)).toBe('INFO: 2 processes: 2 remote.');
  });

  it("re-uploads a blob deleted from the server's CAS storage when an action needs it as input", { timeout: 60_000 }, async () => {
    const dir = tempDir();
    // Disk storage keeps one file per blob: a blob can be deleted behind the server's back.
    writeFileSync(join(dir, 'cluster.json'), JSON.stringify({ storage: { kind: 'disk', path: 'storage' } }));
    const cluster = await startKilnCluster(['--executors', '1', '--runner', 'local', '--config', 'cluster.json'], dir);
    const ws = new E2eWorkspace({
      'MODULE.bazel': '',
      'pkg/in.txt': 'one\n',
      'pkg/BUILD': [
        'genrule(name = "first", srcs = ["in.txt"], outs = ["first.txt"], cmd = "cat $< $< > $@")',
        'genrule(name = "second", srcs = [":first"], outs = ["second.txt"], cmd = "tr a-z A-Z < $< > $@")',
        '',
      ].join('\n'),
    });
    // The cluster as a cache only: //pkg:first runs here and its output goes to the CAS; no executor has seen it.
    const first = await ws.kiln(['build', `--remote_cache=${cluster.endpoint}`, '--spawn_strategy=local', '//pkg:first']);
    expect(first.code, first.stderr).toBe(0);
    const hash = createHash('sha256').update('one\none\n').digest('hex');
    const blob = join(dir, 'storage', 'cas', hash.slice(0, 2), hash);
    expect(existsSync(blob)).toBe(true);
    rmSync(blob);
    // The server still lists the blob (its index was not told), so the client does not send it; the executor
    // cannot fetch it, Execute fails with FAILED_PRECONDITION naming it, and the client sends it and executes again.
    const second = await ws.kiln(['build', `--remote_executor=${cluster.endpoint}`, '//pkg:second']);
    expect(second.code, second.stderr).toBe(0);
    expect(summary(second.stderr)).toBe('INFO: 1 process: 1 remote.');
    expect(ws.read('kiln-bin/pkg/second.txt')).toBe('ONE\nONE\n');
    expect(readFileSync(blob, 'utf8')).toBe('one\none\n');
  });

  it("--verbose_failures on a remote failure shows the executor's stderr, the command and the operation", { timeout: 60_000 }, async () => {
    const cluster = await startKilnCluster();
    const ws = new E2eWorkspace({
      'MODULE.bazel': '',
      'pkg/BUILD': 'genrule(name = "bad", outs = ["bad.txt"], cmd = "echo broken on the executor >&2; exit 3")\n',
    });
    const run = await ws.kiln(['build', `--remote_executor=${cluster.endpoint}`, '--verbose_failures', '//pkg:bad']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'ERROR: pkg/BUILD:1:1: Executing genrule //pkg:bad failed: (Exit 3): bash failed: error executing Genrule command (from target //pkg:bad) \n',
    );
    expect(run.stderr).toContain('broken on the executor');
    expect(run.stderr).toMatch(new RegExp(`\\(remote operation \\S+ on ${cluster.endpoint.replace(/[.]/g, '\\.')}\\)`));
  });

  const dockerHost = process.env['KILN_DOCKER_HOST'] ?? '';
  it.skipIf(!needTool('Docker', dockerHost !== '', 'KILN_DOCKER_HOST is unset; run scripts/test-setup.d/20-docker.sh (npm test does)'))(
    'builds examples/ on cluster up --runner docker with the same bytes as locally',
    { timeout: 180_000 },
    async () => {
      const cluster = await startKilnCluster(['--executors', '1', '--runner', 'docker'], process.cwd(), { ...process.env, DOCKER_HOST: dockerHost });
      await buildExamplesRemotelyAndLocally(cluster.endpoint);
    },
  );

  it('--remote_download_minimal leaves intermediates on the server, fetches what a local action reads, and kiln run still works; toplevel downloads the requested outputs', {
    timeout: 90_000,
  }, async () => {
    const cluster = await startKilnCluster();
    const ws = new E2eWorkspace({
      ...TAGGED,
      'pkg/BUILD': [
        TAGGED['pkg/BUILD'],
        'genrule(name = "here", srcs = [":up"], outs = ["here.txt"], cmd = "cat $< > $@; echo read here >> $@", tags = ["local"])',
        'genrule(name = "tool", outs = ["tool.sh"], cmd = "printf \'#!/bin/sh\\necho tool ran with $$@\\n\' > $@", executable = True)',
        '',
      ].join('\n'),
    });
    const remote = `--remote_executor=${cluster.endpoint}`;
    const minimal = await ws.kiln(['build', remote, '--remote_download_minimal', '--spawn_strategy=remote,local', '//pkg:twice', '//pkg:here']);
    expect(minimal.code, minimal.stderr).toBe(0);
    expect(summary(minimal.stderr)).toBe('INFO: 3 processes: 2 remote, 1 local.');
    // //pkg:twice stayed on the server; //pkg:up was fetched because the local //pkg:here read it.
    expect(existsSync(join(ws.root, 'kiln-bin/pkg/twice.txt'))).toBe(false);
    expect(ws.read('kiln-bin/pkg/up.txt')).toBe('HELLO\n');
    expect(ws.read('kiln-bin/pkg/here.txt')).toBe('HELLO\nread here\n');

    // Again: nothing runs; the remote-only outputs are answered by the remote cache without bytes.
    const again = await ws.kiln(['build', remote, '--remote_download_minimal', '--spawn_strategy=remote,local', '//pkg:twice', '//pkg:here']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.executed).toEqual([]);
    expect(existsSync(join(ws.root, 'kiln-bin/pkg/twice.txt'))).toBe(false);
    expect(ws.read('kiln-bin/pkg/up.txt')).toBe('HELLO\n'); // fetched before, still right: kept
    // A null build without the bytes asks the server nothing: the local action cache knows the results.
    expect(summary(again.stderr)).toBe('INFO: 0 processes.');
    // The same build with every output wanted brings what was left on the server.
    const all = await ws.kiln(['build', remote, '--spawn_strategy=remote,local', '//pkg:twice', '//pkg:here']);
    expect(all.code, all.stderr).toBe(0);
    expect(all.executed).toEqual([]);
    expect(ws.read('kiln-bin/pkg/twice.txt')).toBe('HELLO\nHELLO\nbazel-out/k8-fastbuild/bin/pkg/up.txt\n');

    // toplevel: the requested target's outputs come down, its inputs' do not.
    const other = new E2eWorkspace(TAGGED);
    const toplevel = await other.kiln(['build', remote, '--remote_download_outputs=toplevel', '//pkg:twice']);
    expect(toplevel.code, toplevel.stderr).toBe(0);
    expect(other.read('kiln-bin/pkg/twice.txt')).toBe('HELLO\nHELLO\nbazel-out/k8-fastbuild/bin/pkg/up.txt\n');
    expect(existsSync(join(other.root, 'kiln-bin/pkg/up.txt'))).toBe(false);

    // kiln run downloads its program even with --remote_download_minimal.
    const run = await ws.kiln(['run', remote, '--remote_download_minimal', '//pkg:tool', '--', 'x']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('tool ran with x\n');
  });

  // The local sandbox runs actions in /kiln-sandbox/execroot, the executor in its build directory:
  // a command can tell the branches of the race apart and make one of them slow.
  it.skipIf(!needTool('bubblewrap', HAS_BWRAP, 'run scripts/test-setup.d/10-bubblewrap.sh (npm test does)'))(
    '--spawn_strategy=dynamic takes whichever branch finishes first and writes its outputs once',
    { timeout: 60_000 },
    async () => {
      const cluster = await startKilnCluster();
      const race = (slowWhere: 'local' | 'remote') => {
        // Long enough that the other branch always wins; the loser is cancelled, so nobody waits for it.
        const slow = slowWhere === 'local' ? '/kiln-sandbox/*) sleep 6;;' : '/kiln-sandbox/*) ;; *) sleep 6;;';
        return new E2eWorkspace({
          'MODULE.bazel': '',
          'pkg/in.txt': `${slowWhere}\n`,
          'pkg/BUILD': `genrule(name = "g", srcs = ["in.txt"], outs = ["g.txt"], cmd = 'case "$$PWD" in ${slow} esac; cat $< $< > $@')\n`,
        });
      };
      const remoteWins = race('local');
      const first = await remoteWins.kiln(['build', `--remote_executor=${cluster.endpoint}`, '--spawn_strategy=dynamic', '//pkg:g']);
      expect(first.code, first.stderr).toBe(0);
      expect(summary(first.stderr)).toBe('INFO: 1 process: 1 remote.');
      expect(remoteWins.read('kiln-bin/pkg/g.txt')).toBe('local\nlocal\n');

      const localWins = race('remote');
      const second = await localWins.kiln(['build', `--remote_executor=${cluster.endpoint}`, '--strategy=Genrule=dynamic', '//pkg:g']);
      expect(second.code, second.stderr).toBe(0);
      expect(summary(second.stderr)).toBe('INFO: 1 process: 1 linux-sandbox.');
      expect(localWins.read('kiln-bin/pkg/g.txt')).toBe('remote\nremote\n');
    },
  );

  // The local strategy runs actions in the execroot (.../execroot/racer), the executor elsewhere.
  it('--dynamic_local_strategy chooses the local branch of the race per mnemonic; repeated flags accumulate', { timeout: 60_000 }, async () => {
    const cluster = await startKilnCluster();
    const ws = new E2eWorkspace({
      'MODULE.bazel': 'module(name = "racer")\n',
      'pkg/BUILD': `genrule(name = "g", outs = ["g.txt"], cmd = 'case "$$PWD" in */execroot/racer) ;; *) sleep 6;; esac; echo raced > $@')\n`,
    });
    const run = await ws.kiln([
      'build',
      `--remote_executor=${cluster.endpoint}`,
      '--spawn_strategy=dynamic',
      '--dynamic_local_strategy=sandboxed',
      '--dynamic_local_strategy=Genrule=local',
      '--dynamic_remote_strategy=remote',
      '//pkg:g',
    ]);
    expect(run.code, run.stderr).toBe(0);
    // The mnemonic's own entry (local) won over the fallback (sandboxed); the unsandboxed local run finished first.
    expect(summary(run.stderr)).toBe('INFO: 1 process: 1 local.');
    expect(ws.read('kiln-bin/pkg/g.txt')).toBe('raced\n');
  });

  it("sends exec_properties (and --remote_default_exec_properties) as the action's platform: they choose the executor", { timeout: 60_000 }, async () => {
    const dir = tempDir();
    // An action no executor can run fails after this wait; the first build also waits this long for the executor to register.
    writeFileSync(join(dir, 'cluster.json'), JSON.stringify({ execution: { noExecutorWaitMs: 3000 } }));
    const cluster = await startKilnCluster(['--executors', '1', '--runner', 'local', '--config', 'cluster.json'], dir);
    const ws = new E2eWorkspace({
      'MODULE.bazel': '',
      'pkg/BUILD': [
        'genrule(name = "linux", outs = ["linux.txt"], cmd = "echo on linux > $@", exec_properties = {"OSFamily": "linux"})',
        'genrule(name = "gpu", outs = ["gpu.txt"], cmd = "echo on a gpu > $@", exec_properties = {"Pool": "gpu"})',
        '',
      ].join('\n'),
    });
    const linux = await ws.kiln(['build', `--remote_executor=${cluster.endpoint}`, '//pkg:linux']);
    expect(linux.code, linux.stderr).toBe(0);
    expect(summary(linux.stderr)).toBe('INFO: 1 process: 1 remote.');
    const gpu = await ws.kiln(['build', `--remote_executor=${cluster.endpoint}`, '//pkg:gpu']);
    // The remote system refused the action, not its command: Bazel's 34 (FailureDetails Spawn EXECUTION_FAILED).
    expect(gpu.code).toBe(34);
    expect(gpu.stderr).toMatch(/Executing genrule \/\/pkg:gpu failed: remote execution on grpc:\/\/127\.0\.0\.1:\d+: .*no executor can run this action.*Pool/s);
    const everywhere = await ws.kiln(['build', `--remote_executor=${cluster.endpoint}`, '--remote_default_exec_properties=Pool=gpu', '//pkg:linux']);
    expect(everywhere.code).toBe(34);
    expect(everywhere.stderr).toMatch(/no executor can run this action/);
    // The exec platform's exec_properties (here --host_platform) reach every action too.
    ws.write({ BUILD: 'platform(name = "gpu_host", exec_properties = {"Pool": "gpu"})\n' });
    const onPlatform = await ws.kiln(['build', `--remote_executor=${cluster.endpoint}`, '--host_platform=//:gpu_host', '//pkg:linux']);
    expect(onPlatform.code).toBe(34);
    expect(onPlatform.stderr).toMatch(/no executor can run this action.*Pool/s);
  });

  it('--remote_instance_name selects the instance; an unknown one fails the build naming it', { timeout: 60_000 }, async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'cluster.json'), JSON.stringify({ instanceNames: ['', 'ci'] }));
    const cluster = await startKilnCluster(['--executors', '0', '--config', 'cluster.json'], dir);
    const ws = new E2eWorkspace(TAGGED);
    const ci = await ws.kiln(['build', `--remote_cache=${cluster.endpoint}`, '--remote_instance_name=ci', '--spawn_strategy=local', '//pkg:up']);
    expect(ci.code, ci.stderr).toBe(0);
    // The default instance has nothing: another checkout misses there, and hits in "ci".
    const other = new E2eWorkspace(TAGGED);
    expect(summary((await other.kiln(['build', `--remote_cache=${cluster.endpoint}`, '--spawn_strategy=local', '//pkg:up'])).stderr)).toBe(
      'INFO: 1 process: 1 local.',
    );
    const third = new E2eWorkspace(TAGGED);
    expect(
      summary((await third.kiln(['build', `--remote_cache=${cluster.endpoint}`, '--remote_instance_name=ci', '--spawn_strategy=local', '//pkg:up'])).stderr),
    ).toBe('INFO: 1 process: 1 remote cache hit.');
    const unknown = await new E2eWorkspace(TAGGED).kiln(['build', `--remote_executor=${cluster.endpoint}`, '--remote_instance_name=nope', '//pkg:up']);
    expect(unknown.code).toBe(34);
    expect(unknown.stderr).toMatch(/ERROR: Failed to query remote execution capabilities from grpc:\/\/127\.0\.0\.1:\d+: INVALID_ARGUMENT: .*nope/);
  });
});
