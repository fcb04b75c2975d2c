import { describe, expect, it } from 'vitest';
import type { ProcessResult } from '../../src/core/sandbox/index.js';
import { DynamicStrategy } from '../../src/exec/dynamic-strategy.js';
import { SpawnLost, type Spawn, type SpawnOutcome, type SpawnStrategy } from '../../src/exec/spawn-strategy.js';
import { genrule } from './fixtures.js';

const ok = (stdout: string): ProcessResult => ({
  exitCode: 0,
  signal: null,
  timedOut: false,
  stdout: Buffer.from(stdout),
  stderr: Buffer.alloc(0),
  stdoutTruncated: false,
  stderrTruncated: false,
  wallTimeMs: 1,
});

/** A strategy whose run finishes when the test says, then claims (as the sandboxed and remote strategies do). */
class ScriptedStrategy implements SpawnStrategy {
  readonly name;
  readonly runnerName;
  wrote = 0;
  cancelled = false;
  abandoned: (() => boolean) | undefined;
  private finish: (how: 'succeed' | 'throw') => void = () => {};
  readonly started: Promise<void>;
  private onStart = () => {};

  constructor(kind: 'sandboxed' | 'remote') {
    this.name = kind;
    this.runnerName = kind === 'sandboxed' ? ('linux-sandbox' as const) : ('remote' as const);
    this.started = new Promise((resolve) => (this.onStart = resolve));
  }

  done(how: 'succeed' | 'throw' = 'succeed'): void {
    this.finish(how);
  }

  async exec(spawn: Spawn): Promise<SpawnOutcome> {
    const how = await new Promise<'succeed' | 'throw' | 'cancelled'>((resolve) => {
      this.finish = resolve;
      spawn.signal?.addEventListener('abort', () => resolve('cancelled'));
      // Record what withSlot was told, as the runner would see it.
      void spawn.withSlot?.(async () => ok(''), {}).catch(() => {});
      this.onStart();
    });
    if (how === 'cancelled') this.cancelled = true;
    if (how === 'throw') throw new Error(`${this.name} system unavailable`);
    if (!spawn.claim!()) throw new SpawnLost();
    this.wrote++;
    return ok(this.name);
  }
}

function spawnFor(abandonedSeen: (() => boolean)[]): Spawn {
  return {
    action: genrule('//p:g', { outs: ['o'], cmd: 'true' }),
    inputs: [],
    remoteKey: () => {
      throw new Error('not needed');
    },
    argv: ['true'],
    env: {},
    execRoot: '/nonexistent',
    scratchDir: '/nonexistent',
    withSlot: async (start, how) => {
      if (how?.abandoned) abandonedSeen.push(how.abandoned);
      return start();
    },
  };
}

describe('DynamicStrategy', () => {
  it('takes the branch that finishes first, cancels the other, and only the winner writes', async () => {
    for (const first of ['sandboxed', 'remote'] as const) {
      const local = new ScriptedStrategy('sandboxed');
      const remote = new ScriptedStrategy('remote');
      const abandoned: (() => boolean)[] = [];
      const outcome = new DynamicStrategy(local, remote).exec(spawnFor(abandoned));
      await Promise.all([local.started, remote.started]);
      (first === 'sandboxed' ? local : remote).done();
      const result = await outcome;
      expect(result.ranAs).toBe(first === 'sandboxed' ? 'linux-sandbox' : 'remote');
      expect(result.stdout.toString()).toBe(first);
      expect(local.wrote + remote.wrote).toBe(1);
      expect((first === 'sandboxed' ? remote : local).cancelled).toBe(true);
      // The loser's failure (it was killed) does not count as the action's.
      expect(abandoned.map((isAbandoned) => isAbandoned()).sort()).toEqual([false, true]);
    }
  });

  it('leaves the race to the other branch when one fails for want of its system', async () => {
    const local = new ScriptedStrategy('sandboxed');
    const remote = new ScriptedStrategy('remote');
    const outcome = new DynamicStrategy(local, remote).exec(spawnFor([]));
    await Promise.all([local.started, remote.started]);
    remote.done('throw');
    local.done();
    expect((await outcome).ranAs).toBe('linux-sandbox');
  });

  it('fails with the first error when both branches fail', async () => {
    const local = new ScriptedStrategy('sandboxed');
    const remote = new ScriptedStrategy('remote');
    const outcome = new DynamicStrategy(local, remote).exec(spawnFor([]));
    await Promise.all([local.started, remote.started]);
    remote.done('throw');
    local.done('throw');
    await expect(outcome).rejects.toThrow('remote system unavailable');
  });
});
