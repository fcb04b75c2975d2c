import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EVERYONE, parseCacheServerConfig, startCacheServer, type CacheServer } from '../../scheduler/index.js';
import { BAZEL_2, BAZEL_2_MISSING, runBazel2 } from '../setup/bazel-2.js';
import { needTool } from '../setup/need-tool.js';
import { until } from '../setup/until.js';

// Bazel 2.1.0 (scripts/test-setup.d/30-bazel.sh) publishes its Build Event Protocol stream with
// --bes_backend to the Build Event Service of a cache server started here, on loopback, building a
// genrule workspace in a temp dir against the same server's cache.

const BUILD = `
genrule(name = "hello", outs = ["hello.txt"], cmd = "echo hello > $@")
genrule(name = "twice", srcs = [":hello"], outs = ["twice.txt"], cmd = "cat $< $< > $@")
genrule(name = "slow", outs = ["slow.txt"], cmd = "sleep 60 && touch $@", tags = ["manual"])
`;

describe('Bazel 2.1.0 publishing build events to the cluster', () => {
  if (!needTool('Bazel 2.1.0', BAZEL_2 !== '', BAZEL_2_MISSING)) return;
  let root: string;
  let server: CacheServer | undefined;

  const flags = (s: CacheServer, extra: string[] = []) => [
    `--bes_backend=${s.endpoint}`,
    '--bes_timeout=60s',
    `--remote_cache=${s.endpoint}`,
    '--remote_timeout=60',
    '--noshow_progress',
    '--color=no',
    '--curses=no',
    ...extra,
  ];

  const startServer = async (buildEvents: Record<string, unknown> = {}) => {
    const config = parseCacheServerConfig({ buildEvents }, 'interop', root, { host: '127.0.0.1', port: 0 });
    server = await startCacheServer(config, { log: { info: () => undefined, warn: () => undefined } });
    return server;
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'kiln-bazel-bes-'));
    await Promise.all(['ws', 'home', 'tmp'].map((d) => mkdir(join(root, d))));
    await writeFile(join(root, 'ws', 'WORKSPACE'), 'workspace(name = "bes")\n');
    await writeFile(join(root, 'ws', 'BUILD'), BUILD);
  });

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  afterAll(async () => {
    if (root) {
      await runBazel2(root, ['shutdown']).catch(() => undefined);
      // Bazel makes its install tree read-only.
      await new Promise((resolve) => spawn('chmod', ['-R', 'u+w', root], { stdio: 'ignore' }).on('close', resolve));
      await rm(root, { recursive: true, force: true });
    }
  });

  it('shows the invocation with its command, pattern and targets', { timeout: 300_000 }, async () => {
    const s = await startServer();
    const run = await runBazel2(root, ['build', ...flags(s), '//...']);
    expect(run.code, run.output).toBe(0);
    const [summary, ...others] = s.buildEvents!.list(EVERYONE);
    expect(others).toEqual([]);
    expect(summary).toMatchObject({
      status: 'succeeded',
      command: 'build',
      patterns: ['//...'],
      buildToolVersion: '2.1.0',
      exitCode: 'SUCCESS',
      targetCount: 2,
    });
    expect(summary!.user).not.toBe('');
    const details = s.buildEvents!.get(EVERYONE, summary!.invocationId)!;
    expect(details.targets).toEqual([
      { label: '//:hello', kind: 'genrule rule', success: true },
      { label: '//:twice', kind: 'genrule rule', success: true },
    ]);
    expect(details.attemptResult).toBe('COMMAND_SUCCEEDED');
    const events = s.buildEvents!.events(EVERYONE, summary!.invocationId)!;
    expect(events[0]!.started?.uuid).toBe(summary!.invocationId);
    expect(events.some((e) => e.finished?.overallSuccess)).toBe(true);
    expect(events.at(-1)!.lastMessage).toBe(true);
  });

  it('leaves a partial invocation when the client is killed mid-build, and keeps serving', { timeout: 300_000 }, async () => {
    const s = await startServer();
    const child = spawn(BAZEL_2, [`--output_user_root=${join(root, 'bazel-root')}`, '--batch', 'build', ...flags(s), '//:slow'], {
      cwd: join(root, 'ws'),
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: join(root, 'home'), TMPDIR: join(root, 'tmp') },
      stdio: 'ignore',
      // Its own process group, so the genrule's sleep goes with it.
      detached: true,
    });
    const exited = new Promise((resolve) => child.on('close', resolve));
    try {
      await until(
        () => (s.buildEvents!.list(EVERYONE)[0]?.eventCount ?? 0) > 0 && s.buildEvents!.list(EVERYONE)[0]!.targetCount > 0,
        'the build to publish its configured target',
        120_000,
      );
      expect(s.buildEvents!.list(EVERYONE)[0]!.status).toBe('running');
    } finally {
      process.kill(-child.pid!, 'SIGKILL');
      await exited;
    }
    await until(() => s.buildEvents!.list(EVERYONE)[0]?.status === 'partial', 'the cut invocation to be partial', 60_000);
    const [summary] = s.buildEvents!.list(EVERYONE);
    expect(summary).toMatchObject({ status: 'partial', command: 'build', patterns: ['//:slow'] });
    expect(summary!.finishTimeMs).toBeUndefined();
    expect(s.buildEvents!.get(EVERYONE, summary!.invocationId)!.targets).toEqual([{ label: '//:slow', kind: 'genrule rule' }]);

    // The server still serves: the next build publishes whole.
    const next = await runBazel2(root, ['build', ...flags(s), '//:hello']);
    expect(next.code, next.output).toBe(0);
    expect(s.buildEvents!.list(EVERYONE).map((i) => i.status)).toEqual(['succeeded', 'partial']);
  });

  it('refuses a stream past its limits with RESOURCE_EXHAUSTED, and stores no more than the limit', { timeout: 300_000 }, async () => {
    const s = await startServer({ maxEventsPerInvocation: 5 });
    const run = await runBazel2(root, ['build', ...flags(s), '//...']);
    // Bazel's exit code for a build whose event upload failed (the build itself succeeded).
    expect(run.code, run.output).toBe(38);
    expect(run.output).toMatch(/The Build Event Protocol upload failed: RESOURCE_EXHAUSTED: .*buildEvents\.maxEventsPerInvocation/);
    const [summary] = s.buildEvents!.list(EVERYONE);
    expect(summary).toMatchObject({ status: 'partial', eventCount: 5, command: 'build' });
  });
});
