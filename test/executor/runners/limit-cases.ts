import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/core/index.js';
import type { ResourceLimitPolicy } from '../../../executor/runners/resource-limits.js';
import type { PlatformProperty, RunRequest, Runner } from '../../../executor/runners/runner.js';

/** Small limits, so that going beyond them is quick: 64 MiB, 64 pids, 1 CPU by default; actions may ask up to twice that. */
export const TEST_LIMITS: ResourceLimitPolicy = {
  defaults: { memoryBytes: 64 << 20, pids: 64, cpus: 1 },
  ceilings: { memoryBytes: 128 << 20, pids: 128, cpus: 1 },
};

/** Forks `n` sleeping processes with the POSIX shell (dash gives up at once when a fork fails; bash retries). */
export const forkScript = (n: number) => `i=0; while [ $i -lt ${n} ]; do sleep 30 & i=$((i+1)); done; echo forked ${n}`;
/** Holds ~200 MB in the shell's memory. */
export const allocateScript = 'x=$(head -c 200000000 /dev/zero | tr "\\0" a); echo ${#x}';

/** A request that runs `script` with /bin/sh in `buildDirectory`. */
export function shRequest(buildDirectory: string, script: string, platform: PlatformProperty[] = []): RunRequest {
  return {
    buildDirectory,
    arguments: ['/bin/sh', '-c', script],
    environment: { PATH: '/usr/bin:/bin' },
    workingDirectory: '',
    platform,
    timeoutMs: 20_000,
    stdout: { kind: 'buffer', limitBytes: 1 << 16 },
    stderr: { kind: 'buffer', limitBytes: 1 << 16 },
  };
}

/** What every runner that enforces TEST_LIMITS does; docker-runner and local-runner tests call this. */
export function limitCases(getRunner: () => Runner): void {
  let buildDirectory: string;
  beforeEach(() => {
    buildDirectory = mkdtempSync(join(tmpdir(), 'kiln-build-'));
    chmodSync(buildDirectory, 0o755);
  });
  afterEach(() => rmSync(buildDirectory, { recursive: true, force: true }));
  const sh = (script: string, platform: PlatformProperty[] = []): RunRequest => shRequest(buildDirectory, script, platform);

  it('fails an action that forks 400 processes under the pids limit, quickly', async () => {
    const r = await getRunner().run(sh(forkScript(400)));
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).not.toBe(0);
    expect(r.stdout.toString()).not.toContain('forked');
    expect(r.stderr.toString()).toMatch(/fork/i);
  });

  it('kills an action that allocates beyond the memory limit and says it ran out of memory', async () => {
    const r = await getRunner().run(sh(allocateScript));
    expect(r.exitCode).toBe(137);
    expect(r.outOfMemory).toBe(true);
    expect(r.stdout.toString()).toBe('');
  });

  it('lets an action raise its limits with max-pids and max-mem up to the ceilings', async () => {
    const forks = await getRunner().run(sh(forkScript(80), [{ name: 'max-pids', value: '120' }]));
    expect(forks.stdout.toString()).toBe('forked 80\n');
    expect(forks.exitCode).toBe(0);
    const lowered = await getRunner().run(sh(forkScript(40), [{ name: 'max-pids', value: '20' }]));
    expect(lowered.exitCode).not.toBe(0);
    // 50 MB held by the shell (about twice that at its peak) fits in 128 MiB, not in the default 64.
    const hold50 = 'x=$(head -c 50000000 /dev/zero | tr "\\0" a); echo ${#x}';
    expect((await getRunner().run(sh(hold50))).exitCode).toBe(137);
    const memory = await getRunner().run(sh(hold50, [{ name: 'max-mem', value: '128m' }]));
    expect(memory.stdout.toString()).toBe('50000000\n');
  });

  it('rejects limit properties above the ceilings or malformed, naming the property', async () => {
    await expect(getRunner().run(sh('true', [{ name: 'max-pids', value: '1000' }]))).rejects.toThrow(
      /platform property max-pids=1000 is above this executor's ceiling of 128 \(the operator raises it with --max-pids-limit\)/,
    );
    await expect(getRunner().run(sh('true', [{ name: 'max-mem', value: 'lots' }]))).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(getRunner().run(sh('true', [{ name: 'max-cores', value: '-1' }]))).rejects.toThrow(
      /platform property max-cores="-1": expected a number of CPUs/,
    );
  });
}
