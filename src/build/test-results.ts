import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** How one test run ended, as its `test.status` file (written by the test setup script) says. */
export interface RunResult {
  readonly status: 'PASSED' | 'FAILED' | 'TIMEOUT';
  readonly durationMs: number;
  readonly exitCode: number;
}

/** Reads `<execroot>/<logDir>/test.status`; undefined when the run did not happen (or left no status). */
export function readRunResult(execRoot: string, logDir: string): RunResult | undefined {
  let text: string;
  try {
    text = readFileSync(join(execRoot, logDir, 'test.status'), 'utf8');
  } catch {
    return undefined;
  }
  const fields = new Map(
    text
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('=', 2) as [string, string]),
  );
  const exitCode = Number(fields.get('exit_code'));
  const durationMs = Number(fields.get('duration_ms'));
  if (!Number.isInteger(exitCode) || !Number.isFinite(durationMs)) return undefined;
  const status = fields.get('timed_out') === '1' ? 'TIMEOUT' : exitCode === 0 ? 'PASSED' : 'FAILED';
  return { status, durationMs, exitCode };
}
