import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ActionCgroups } from '../../../executor/runners/action-cgroups.js';
import { chooseSandbox, detectSandboxSupport, nativeSpawnerBinary } from '../../../src/core/sandbox/index.js';
import { LocalRunner } from '../../../executor/runners/local-runner.js';
import { limitCases, shRequest, TEST_LIMITS } from './limit-cases.js';
import { runnerCases } from './runner-cases.js';
import { needTool } from '../../setup/need-tool.js';

const support = await detectSandboxSupport();

// Whether this machine lets the executor make cgroups (v2 delegated, or v1 as root). No setup script
// can grant them, so where they are missing the limit cases are skipped, under a name that says why;
// the runner's behaviour without them has its own test below.
const cgroups = ActionCgroups.open();
const limitsHere = cgroups instanceof ActionCgroups;
if (limitsHere) cgroups.close();
else needTool('cgroups', false, cgroups.reason, { optional: 'executor/README.md: without cgroups the local runner runs actions unlimited' });

const nativeHere = nativeSpawnerBinary() !== undefined;

describe('LocalRunner in the native sandbox, as kiln build --spawn_strategy=sandboxed', async () => {
  if (!needTool('the native sandbox helper', nativeHere, 'npm run build compiles it where a C compiler is (scripts/test-setup.d/05-c-compiler.sh)')) return;
  const runner = await LocalRunner.create({ log: (m) => expect.fail(`unexpected fallback: ${m}`), limits: TEST_LIMITS });
  afterAll(() => runner.close());
  it('uses the sandbox chooseSandbox picks for builds: the native one', async () => {
    expect(runner.name).toBe('linux-sandbox');
    expect(runner.sandbox?.kind).toBe('native');
    const build = await chooseSandbox();
    if (build.available) await build.close();
    expect(build.available && build.kind).toBe('native');
  });
  const asRoot = needTool('root', process.getuid?.() === 0, 'run the tests as root', {
    optional: 'executor/README.md: an executor runs as root or as another user',
  });
  it.runIf(asRoot)('runs the actions of a root executor as nobody, so their inputs can be hard links', () => {
    expect(runner.actionUser).toBe('separate');
  });
  runnerCases(() => runner, { confines: true });
  describe.skipIf(!limitsHere)('under cgroup limits', () => limitCases(() => runner));
});

describe('LocalRunner in the bubblewrap sandbox (the fallback)', async () => {
  const howToGet = `${support.available ? '' : support.reason} (run scripts/test-setup.d/10-bubblewrap.sh)`;
  if (!needTool('the namespace sandbox (bubblewrap)', support.available, howToGet)) return;
  const runner = await LocalRunner.create({ nativeSandbox: false, log: (m) => expect.fail(`unexpected fallback: ${m}`), limits: TEST_LIMITS });
  afterAll(() => runner.close());
  it('uses bubblewrap', () => {
    expect(runner.name).toBe('linux-sandbox');
    expect(runner.sandbox?.kind).toBe('bubblewrap');
  });
  runnerCases(() => runner, { confines: true });
  describe.skipIf(!limitsHere)('under cgroup limits', () => limitCases(() => runner));
});

describe('LocalRunner as a plain process', async () => {
  const runner = await LocalRunner.create({ sandbox: 'off', limits: TEST_LIMITS, log: () => undefined });
  afterAll(() => runner.close());
  it('is the local runner', () => expect(runner.name).toBe('local'));
  // A plain process claims no confinement (network, root, escaped processes): those cases do not run.
  runnerCases(() => runner, { confines: false });
  describe.skipIf(!limitsHere)('under cgroup limits', () => limitCases(() => runner));
});

describe.skipIf(!limitsHere)('LocalRunner limits', () => {
  it('applies the default limits when none are given: 1 GiB without swap, 256 pids, 2 CPUs', async () => {
    const runner = await LocalRunner.create({ sandbox: 'off' });
    const dir = mkdtempSync(join(tmpdir(), 'kiln-build-'));
    try {
      expect(runner.enforcesLimits).toMatch(/^cgroup v[12]$/);
      // The command reads its own cgroup's limit files (v1: one hierarchy per controller; v2: one).
      const script =
        'for c in memory pids cpu; do p=$(grep -E "^[0-9]+:([^:]*,)?$c(,[^:]*)?:" /proc/self/cgroup | cut -d: -f3); ' +
        '[ -n "$p" ] && echo "$c $(cat /sys/fs/cgroup/$c$p/memory.limit_in_bytes /sys/fs/cgroup/$c$p/pids.max /sys/fs/cgroup/$c$p/cpu.cfs_quota_us 2>/dev/null)"; done; ' +
        'p=$(grep "^0::" /proc/self/cgroup | cut -d: -f3); for f in memory.max memory.swap.max pids.max cpu.max; do [ -f /sys/fs/cgroup$p/$f ] && echo "$f $(cat /sys/fs/cgroup$p/$f)"; done; true';
      const r = await runner.run(shRequest(dir, script));
      const out = r.stdout.toString();
      const cpus = Math.min(2, availableParallelism());
      if (runner.enforcesLimits === 'cgroup v1') {
        expect(out).toContain(`memory ${1024 ** 3}`);
        expect(out).toContain('pids 256');
        expect(out).toContain(`cpu ${cpus * 100000}`);
      } else {
        expect(out).toContain(`memory.max ${1024 ** 3}`);
        expect(out).toContain('memory.swap.max 0');
        expect(out).toContain('pids.max 256');
        expect(out).toContain(`cpu.max ${cpus * 100000} 100000`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await runner.close();
    }
  });
});

describe('LocalRunner without cgroups', () => {
  it('says at start that actions run without limits, and why', async () => {
    const messages: string[] = [];
    // A host whose /proc names no cgroup: what a machine without them shows the runner, on any host.
    const nowhere = mkdtempSync(join(tmpdir(), 'kiln-no-cgroups-'));
    const cgroupPaths = { selfCgroup: join(nowhere, 'cgroup'), selfMountinfo: join(nowhere, 'mountinfo'), root: nowhere };
    const runner = await LocalRunner.create({ sandbox: 'off', log: (m) => messages.push(m), cgroupPaths }).finally(() =>
      rmSync(nowhere, { recursive: true, force: true }),
    );
    await runner.close();
    expect(runner.enforcesLimits).toBe(false);
    expect(messages).toEqual([expect.stringMatching(/^local runner: actions run without memory, pids or CPU limits: .*cgroup/)]);
  });
});

describe('LocalRunner.create', () => {
  it('says once why it runs without a sandbox', async () => {
    const messages: string[] = [];
    const previous = process.env.KILN_BWRAP;
    process.env.KILN_BWRAP = '/bin/false';
    try {
      const runner = await LocalRunner.create({ nativeSandbox: false, log: (m) => messages.push(m), limits: null });
      expect(runner.name).toBe('local');
      await runner.close();
    } finally {
      if (previous === undefined) delete process.env.KILN_BWRAP;
      else process.env.KILN_BWRAP = previous;
    }
    expect(messages).toEqual([expect.stringContaining('running actions without a sandbox: /bin/false cannot create namespaces')]);
  });
});
