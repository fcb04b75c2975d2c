import { describe, expect, it } from 'vitest';
import type { Action } from '../../../src/actions/index.js';
import { ActionRecorder, type ActionRecord } from '../../../src/build/records/action-records.js';
import type { ExecutionReporter } from '../../../src/exec/index.js';

const action = { owner: '//:x', mnemonic: 'Genrule', progressMessage: 'Executing genrule //:x', outputs: [{ execPath: 'x' }] } as unknown as Action;

describe('ActionRecorder', () => {
  it('passes every reporter call through, and times each action that ran', () => {
    const calls: string[] = [];
    const inner: Required<ExecutionReporter> = {
      buildStarted: () => void calls.push('buildStarted'),
      actionStarted: () => void calls.push('actionStarted'),
      actionFinished: () => void calls.push('actionFinished'),
      actionFailed: () => void calls.push('actionFailed'),
      actionOutput: () => void calls.push('actionOutput'),
      warning: () => void calls.push('warning'),
      buildFinished: () => void calls.push('buildFinished'),
      flush: () => void calls.push('flush'),
      interject: (write) => {
        calls.push('interject');
        write();
      },
    };
    const records: ActionRecord[] = [];
    let now = 1000;
    const recorder = new ActionRecorder(
      inner,
      (r) => records.push(r),
      () => now,
    );
    recorder.buildStarted(1);
    recorder.actionStarted(action, 'linux-sandbox', 'cmd');
    now = 1250;
    recorder.actionOutput(action, { stdout: Buffer.from('hi'), stderr: Buffer.alloc(0) } as never);
    recorder.actionFinished(action, 'linux-sandbox', { exitCode: 0, timedOut: false, wallTimeMs: 240 });
    recorder.actionFailed({ action, message: 'Executing genrule //:x failed: (Exit 2): bash failed' });
    recorder.warning('w');
    recorder.flush();
    recorder.interject(() => calls.push('written'));
    recorder.buildFinished({ success: true, totalActions: 1, processes: {} as never, failures: [] });
    // Every member of the interface, optional ones included, reaches the inner reporter.
    expect(new Set(calls)).toEqual(new Set([...Object.keys(inner), 'written']));
    expect(records.map((r) => [r.startMs, r.endMs, r.runner, r.cacheHit, r.exitCode])).toEqual([[1000, 1250, 'linux-sandbox', false, 0]]);
  });

  it('records a failure that never finished with the exit code its message states', () => {
    const records: ActionRecord[] = [];
    const inner = { buildStarted() {}, actionStarted() {}, actionFinished() {}, actionFailed() {}, warning() {}, buildFinished() {} };
    const recorder = new ActionRecorder(
      inner,
      (r) => records.push(r),
      () => 5,
    );
    recorder.actionStarted(action, 'local', 'cmd');
    recorder.actionFailed({ action, message: 'Executing genrule //:x failed: (Exit 2): bash failed' });
    expect(records.map((r) => [r.runner, r.exitCode, r.failure?.message])).toEqual([['local', 2, 'Executing genrule //:x failed: (Exit 2): bash failed']]);
  });
});
