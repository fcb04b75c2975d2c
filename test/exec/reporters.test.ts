import { describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  failedActionsExitCode,
  formatCommand,
  formatFailure,
  formatProcessSummary,
  PlainReporter,
  TerminalReporter,
  type ExecutionSummary,
  type ProcessKind,
} from '../../src/exec/index.js';
import { genrule } from './fixtures.js';

const counts = (c: Partial<Record<ProcessKind, number>>): Record<ProcessKind, number> => ({
  'disk cache hit': 0,
  'remote cache hit': 0,
  internal: 0,
  remote: 0,
  'linux-sandbox': 0,
  local: 0,
  ...c,
});

describe("Bazel's process summary", () => {
  it('lists only non-zero kinds, in Bazel order, with singular and plural', () => {
    expect(formatProcessSummary(counts({ local: 2, 'disk cache hit': 3, 'linux-sandbox': 1 }))).toBe(
      'INFO: 6 processes: 3 disk cache hit, 1 linux-sandbox, 2 local.',
    );
    expect(formatProcessSummary(counts({ internal: 1 }))).toBe('INFO: 1 process: 1 internal.');
    expect(formatProcessSummary(counts({ 'remote cache hit': 1, remote: 4, internal: 2 }))).toBe(
      'INFO: 7 processes: 1 remote cache hit, 2 internal, 4 remote.',
    );
    expect(formatProcessSummary(counts({}))).toBe('INFO: 0 processes.');
  });
});

describe('failures', () => {
  const action = genrule('//pkg:x', { outs: ['o'], cmd: "echo 'hi' && false" });
  const failure = {
    action,
    message: 'Executing genrule //pkg:x failed (Exit 1)',
    command: formatCommand('/ob/execroot', { PATH: '/bin' }, action.argv),
    stderr: Buffer.from('oops'),
  };

  it('print the location, message, stderr and target; the command only with --verbose_failures', () => {
    expect(formatFailure(failure, false)).toBe(
      'ERROR: pkg/BUILD:1:1: Executing genrule //pkg:x failed (Exit 1)\noops\nTarget //pkg:x failed to build\nUse --verbose_failures to see the command lines of failed build steps.\n',
    );
    expect(formatFailure(failure, true)).toBe(
      "ERROR: pkg/BUILD:1:1: Executing genrule //pkg:x failed (Exit 1)\n  (cd /ob/execroot && \\\n  exec env - \\\n    PATH=/bin \\\n  /bin/bash -c 'set -euo pipefail; echo '\\''hi'\\'' && false')\noops\nTarget //pkg:x failed to build\n",
    );
  });
});

describe('reporters', () => {
  const a = genrule('//p:a', { outs: ['a'], cmd: 'true' });
  const b = genrule('//p:b', { outs: ['b'], cmd: 'true' });
  const summary: ExecutionSummary = { success: true, totalActions: 2, processes: counts({ local: 2 }), failures: [] };

  it('plain: one line per started action, then the summary', () => {
    let text = '';
    const r = new PlainReporter({ write: (s) => (text += s) });
    r.buildStarted(2);
    r.actionStarted(a, 'local', 'cmd a');
    r.actionFinished(a, 'local');
    r.actionStarted(b, 'local', 'cmd b');
    r.actionFinished(b, 'local');
    r.buildFinished(summary);
    expect(text).toBe(
      '[0 / 2] Executing genrule //p:a\n[1 / 2] Executing genrule //p:b\nINFO: 2 processes: 2 local.\nINFO: Build completed successfully, 2 total actions\n',
    );
  });

  it('plain: progress lines go out together, at the latest when the flush interval ends or anything else is written', () => {
    vi.useFakeTimers();
    onTestFinished(() => void vi.useRealTimers());
    const writes: string[] = [];
    const r = new PlainReporter({ write: (s) => writes.push(s) }, { flushMs: 100 });
    r.buildStarted(3);
    r.actionStarted(a, 'local', 'cmd a');
    r.actionStarted(b, 'local', 'cmd b');
    vi.advanceTimersByTime(99);
    expect(writes).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(writes).toEqual(['[0 / 3] Executing genrule //p:a\n[0 / 3] Executing genrule //p:b\n']);
    r.actionStarted(a, 'local', 'cmd a');
    r.warning('careful');
    expect(writes.slice(1)).toEqual(['[0 / 3] Executing genrule //p:a\n', 'WARNING: careful\n']);
  });

  it('--show_progress_rate_limit: progress lines closer together than the limit are left out', () => {
    let text = '';
    let now = 0;
    const r = new PlainReporter({ write: (s) => (text += s) }, { progressRateLimitMs: 2000, clock: { now: () => now } });
    r.buildStarted(3);
    r.actionStarted(a, 'local', 'cmd a');
    now = 1999;
    r.actionStarted(b, 'local', 'cmd b');
    now = 2000;
    r.actionStarted(a, 'local', 'cmd a');
    r.flush();
    expect(text).toBe('[0 / 3] Executing genrule //p:a\n[0 / 3] Executing genrule //p:a\n');
  });

  it("a successful action's output: Bazel's INFO: From block, stderr first; --output_filter on the owner's label", () => {
    let text = '';
    const r = new PlainReporter({ write: (s) => (text += s) }, { outputFilter: /^\/\/p:a$/ });
    r.actionOutput(a, { stdout: Buffer.from('out'), stderr: Buffer.from('err\n') });
    r.actionOutput(b, { stdout: Buffer.from('hidden\n'), stderr: Buffer.alloc(0) });
    r.actionOutput(a, { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) });
    expect(text).toBe('INFO: From Executing genrule //p:a:\nerr\nout\n');
  });

  it('--subcommands: prints each command before it runs', () => {
    let text = '';
    const r = new PlainReporter({ write: (s) => (text += s) }, { subcommands: true });
    r.buildStarted(1);
    r.actionStarted(a, 'local', formatCommand('/x', { PATH: '/bin' }, a.argv));
    r.flush();
    expect(text).toBe(
      "SUBCOMMAND: # //p:a [action 'Executing genrule //p:a', mnemonic: Genrule]\n  (cd /x && \\\n  exec env - \\\n    PATH=/bin \\\n  /bin/bash -c 'set -euo pipefail; true')\n[0 / 1] Executing genrule //p:a\n",
    );
  });

  it('terminal: a status block redrawn in place with the running actions and their elapsed times', () => {
    let now = 0;
    let text = '';
    const r = new TerminalReporter({ write: (s) => (text += s) }, { clock: { now: () => now }, refreshMs: 0 });
    r.buildStarted(40);
    r.actionStarted(a, 'linux-sandbox', 'cmd a');
    now = 2000;
    r.actionStarted(b, 'local', 'cmd b');
    now = 5500;
    expect(r.statusLines()).toEqual(['[0 / 40] Executing genrule //p:a; 5s linux-sandbox ... (2 actions running)', '    Executing genrule //p:b; 3s local']);
    r.actionFinished(a, 'linux-sandbox');
    expect(r.statusLines()).toEqual(['[1 / 40] Executing genrule //p:b; 3s local']);
    r.warning('careful');
    // The warning is printed above the status block: erase (cursor up + clear), message, redraw.
    expect(text).toContain('\r\x1b[1A\x1b[JWARNING: careful\n[1 / 40] Executing genrule //p:b; 3s local\n');
    r.buildFinished({ ...summary, totalActions: 40 });
    expect(text.endsWith('\x1b[JINFO: 2 processes: 2 local.\nINFO: Build completed successfully, 40 total actions\n')).toBe(true);
  });

  it("interject: the caller's lines go above a terminal's status block, after a plain reporter's pending progress", () => {
    let text = '';
    const terminal = new TerminalReporter({ write: (s) => (text += s) }, { clock: { now: () => 0 }, refreshMs: 0 });
    terminal.buildStarted(2);
    terminal.actionStarted(a, 'local', 'cmd a');
    terminal.interject(() => (text += 'FAIL: //p:t\n'));
    expect(text).toContain('\r\x1b[1A\x1b[JFAIL: //p:t\n[0 / 2] Executing genrule //p:a; 0s local\n');
    let plain = '';
    const p = new PlainReporter({ write: (s) => (plain += s) }, { flushMs: 60_000 });
    p.buildStarted(2);
    p.actionStarted(a, 'local', 'cmd a');
    p.interject(() => (plain += 'FAIL: //p:t\n'));
    expect(plain).toBe('[0 / 2] Executing genrule //p:a\nFAIL: //p:t\n');
  });

  it("the command's closing lines come after a terminal's status block is erased, before the process summary", () => {
    let text = '';
    const seen: ExecutionSummary[] = [];
    const closingLines = (s: ExecutionSummary) => {
      seen.push(s);
      return 'Target //p:a up-to-date:\nINFO: Elapsed time: 1.000s\n';
    };
    const r = new TerminalReporter({ write: (s) => (text += s) }, { clock: { now: () => 0 }, refreshMs: 0, closingLines });
    r.buildStarted(2);
    r.actionStarted(a, 'local', 'cmd a');
    r.buildFinished(summary);
    expect(
      text.endsWith(
        '\r\x1b[1A\x1b[JTarget //p:a up-to-date:\nINFO: Elapsed time: 1.000s\nINFO: 2 processes: 2 local.\nINFO: Build completed successfully, 2 total actions\n',
      ),
    ).toBe(true);
    expect(seen).toEqual([summary]);
  });

  it('a build that failed before execution (--keep_going) closes as failed, and the command is told', () => {
    let text = '';
    let success: boolean | undefined;
    const p = new PlainReporter({ write: (s) => (text += s) }, { failedBeforeExecution: true, closingLines: (s) => ((success = s.success), '') });
    p.buildFinished(summary);
    expect(text).toBe('INFO: 2 processes: 2 local.\nFAILED: Build did NOT complete successfully\n');
    expect(success).toBe(false);
  });

  it('a closing line that counts failed tests, as Bazel prints it for kiln test', () => {
    let text = '';
    const p = new PlainReporter({ write: (s) => (text += s) });
    p.buildFinished({ ...summary, totalActions: 9, failedTests: 2 });
    expect(text).toContain('INFO: Build completed, 2 tests FAILED, 9 total actions\n');
  });
});

describe('failedActionsExitCode', () => {
  const a = genrule('//p:a', { outs: ['a'], cmd: 'false' });
  const b = genrule('//p:b', { outs: ['b'], cmd: 'true' });
  it("is a command's 1, and Bazel's 34 as soon as one action failed because the remote system did", () => {
    expect(failedActionsExitCode([{ action: a, message: 'Executing genrule //p:a failed (Exit 1)' }])).toBe(1);
    const remote = { action: b, message: 'Executing genrule //p:b failed: remote execution on grpc://h:1: DEADLINE_EXCEEDED', exitCode: 34 };
    expect(failedActionsExitCode([remote])).toBe(34);
    expect(failedActionsExitCode([{ action: a, message: 'Executing genrule //p:a failed (Exit 1)' }, remote])).toBe(34);
  });
});
