import { describe, expect, it } from 'vitest';
import { createServerLog, formatLogLine, logFormatFor } from '../../../src/core/log/index.js';

function capture(format: 'json' | 'text') {
  const lines: string[] = [];
  const log = createServerLog({ role: 'scheduler', format, write: (line) => lines.push(line) });
  return { log, lines };
}

describe('server log', () => {
  it('writes one JSON object per line with level, time, role, message and the operation fields given', () => {
    const { log, lines } = capture('json');
    log.info('operation finished: exit code 0', { operation: 'operations/1', actionDigest: 'ab/3', invocationId: 'inv-7' });
    log.warn('Write failed: disk full', { invocationId: '' });
    expect(lines).toHaveLength(2);
    expect(lines.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n'))).toBe(true);
    const [first, second] = lines.map((l) => JSON.parse(l));
    expect(first).toMatchObject({
      level: 'info',
      role: 'scheduler',
      msg: 'operation finished: exit code 0',
      operation: 'operations/1',
      actionDigest: 'ab/3',
      invocationId: 'inv-7',
    });
    expect(new Date(first.time).toISOString()).toBe(first.time);
    // An empty invocation id (the client sent none) is left out rather than logged as "".
    expect(second).toMatchObject({ level: 'warn', msg: 'Write failed: disk full' });
    expect(second).not.toHaveProperty('invocationId');
  });

  it("prints Kiln's INFO/WARNING lines on a terminal, the fields after the message", () => {
    const { log, lines } = capture('text');
    log.info('kiln cache server listening on grpc://127.0.0.1:1');
    log.warn('assigned to executor e1', { operation: 'operations/2', actionDigest: 'cd/4' });
    expect(lines).toEqual([
      'INFO: kiln cache server listening on grpc://127.0.0.1:1\n',
      'WARNING: assigned to executor e1 (operation=operations/2, actionDigest=cd/4)\n',
    ]);
  });

  it('keeps a message with quotes and newlines on one JSON line', () => {
    const { log, lines } = capture('json');
    log.info('instance "ci":\nsecond line');
    expect(lines).toHaveLength(1);
    expect(formatLogLine(lines[0]!)).toBe('INFO: instance "ci":\nsecond line\n');
  });

  it('chooses text on a terminal and JSON elsewhere, unless KILN_LOG_FORMAT says', () => {
    expect(logFormatFor(true, undefined)).toBe('text');
    expect(logFormatFor(false, undefined)).toBe('json');
    expect(logFormatFor(true, 'json')).toBe('json');
    expect(logFormatFor(false, 'text')).toBe('text');
    expect(logFormatFor(false, 'yaml')).toBe('json');
  });
});
