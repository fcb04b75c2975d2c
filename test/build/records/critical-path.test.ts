import { describe, expect, it } from 'vitest';
import type { Action } from '../../../src/actions/index.js';
import type { ActionRecord } from '../../../src/build/records/action-records.js';
import { criticalPath, TraceProfileRecorder } from '../../../src/build/records/trace-profile.js';

function action(name: string, inputs: string[], output: string): Action {
  return {
    owner: `//:${name}`,
    mnemonic: 'Genrule',
    progressMessage: `Executing genrule //:${name}`,
    argv: ['/bin/true'],
    env: {},
    inputs: inputs.map((execPath) => ({ kind: 'derived', execPath }) as unknown as Action['inputs'][number]),
    outputs: [{ kind: 'derived', execPath: output } as unknown as Action['outputs'][number]],
    executionRequirements: [],
    executableOutputs: false,
  };
}

function ran(a: Action, startMs: number, endMs: number): ActionRecord {
  return { action: a, startMs, endMs, runner: 'local', cacheHit: false, exitCode: 0, timedOut: false };
}

describe('the JSON trace profile', () => {
  // a (100 ms) -> c (50 ms) is longer than b (120 ms) -> c: the path follows the longer chain.
  const a = ran(action('a', [], 'a.out'), 1000, 1100);
  const b = ran(action('b', [], 'b.out'), 1000, 1120);
  const c = ran(action('c', ['a.out', 'b.out'], 'c.out'), 1120, 1170);

  it('finds the critical path: the longest chain of producers, first action first', () => {
    expect(criticalPath([a, b, c]).map((r) => r.action.owner)).toEqual(['//:b', '//:c']);
    expect(criticalPath([])).toEqual([]);
  });

  it('puts overlapping actions on different threads, with their mnemonic, target and primary output', () => {
    const recorder = new TraceProfileRecorder(1000, { buildId: 'id', outputBase: '/ob' });
    recorder.phase('Build artifacts', 1000);
    const profile = recorder.profile([a, b, c], 1200);
    const spans = profile.traceEvents.filter((e) => e.cat === 'action processing');
    expect(spans.map((s) => [s.name, s.ts, s.dur, s.out, s.args?.mnemonic, s.args?.target])).toEqual([
      ['Executing genrule //:a', 0, 100_000, 'a.out', 'Genrule', '//:a'],
      ['Executing genrule //:b', 0, 120_000, 'b.out', 'Genrule', '//:b'],
      ['Executing genrule //:c', 120_000, 50_000, 'c.out', 'Genrule', '//:c'],
    ]);
    expect(new Set(spans.slice(0, 2).map((s) => s.tid)).size).toBe(2);
    expect(profile.traceEvents.filter((e) => e.cat === 'critical path component').map((e) => [e.name, e.tid])).toEqual([
      ["action 'Executing genrule //:b'", 0],
      ["action 'Executing genrule //:c'", 0],
    ]);
    expect(profile.otherData).toMatchObject({ build_id: 'id', output_base: '/ob', date: 'Thu Jan 01 00:00:01 UTC 1970' });
  });
});
