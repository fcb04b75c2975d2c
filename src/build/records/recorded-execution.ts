import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Action } from '../../actions/index.js';
import type { TestRun, TestTarget } from '../../analysis/index.js';
import type { ExecutionSummary } from '../../exec/index.js';
import type { BuiltTarget } from '../build-graph.js';
import type { RunResult } from '../test-results.js';
import type { ActionRecord } from './action-records.js';
import type { RecordedTestRun } from './build-event-recorder.js';

/**
 * The requested targets whose outputs were all built: after a successful execution every one;
 * otherwise those none of whose files comes from a failed action or from an action downstream of
 * one (which never ran), and whose files are all there.
 */
export function builtTargetsOf(targets: readonly BuiltTarget[], actions: readonly Action[], summary: ExecutionSummary, execRoot: string): Set<string> {
  if (summary.success) return new Set(targets.map((t) => t.label));
  const broken = new Set(summary.failures.flatMap((f) => f.action.outputs.map((o) => o.execPath)));
  for (let changed = true; changed; ) {
    changed = false;
    for (const action of actions) {
      if (action.outputs.every((o) => broken.has(o.execPath)) || !action.inputs.some((i) => broken.has(i.execPath))) continue;
      for (const o of action.outputs) broken.add(o.execPath);
      changed = true;
    }
  }
  return new Set(targets.filter((t) => t.files.every((f) => !broken.has(f) && existsSync(join(execRoot, f)))).map((t) => t.label));
}

/** What the test phase kept of each attempt (TestRunReporter's records). */
export interface TestAttemptRecord {
  readonly result: RunResult;
  readonly cached: boolean;
  readonly remote: boolean;
  readonly logPath: string;
}

/** Each test's runs with their attempts, timed by the action records (a cached attempt ran no action: its time is its result's). */
export function testRunsOf(
  tests: readonly TestTarget[],
  attempts: ReadonlyMap<TestRun, readonly TestAttemptRecord[]>,
  records: { recordsOf(action: Action): readonly ActionRecord[] },
  execRoot: string,
): Map<string, RecordedTestRun[]> {
  const out = new Map<string, RecordedTestRun[]>();
  for (const test of tests) {
    const runs: RecordedTestRun[] = [];
    for (const run of test.runs) {
      const ran = records.recordsOf(run.action);
      const list = attempts.get(run) ?? [];
      runs.push({
        ...(run.shard === undefined ? {} : { shard: run.shard }),
        run: run.run,
        attempts: list.map((a, i) => {
          const record = ran[i];
          // A retried attempt's log and XML were moved side by side under test_attempts/.
          const xmlPath = a.logPath.endsWith('/test.log') ? join(dirname(a.logPath), 'test.xml') : a.logPath.replace(/\.log$/, '.xml');
          return {
            status: a.result.status,
            durationMs: Math.round(a.result.durationMs),
            exitCode: a.result.exitCode,
            cached: a.cached,
            remote: a.remote,
            logPath: a.logPath.startsWith('/') ? a.logPath : join(execRoot, a.logPath),
            xmlPath: xmlPath.startsWith('/') ? xmlPath : join(execRoot, xmlPath),
            startMs: record?.startMs ?? Date.now() - a.result.durationMs,
            strategy: record?.runner ?? (a.cached ? 'disk cache hit' : 'local'),
          };
        }),
      });
    }
    out.set(test.label, runs);
  }
  return out;
}
