import { formatLogLine } from '../../src/core/log/index.js';

/** One line of a server role's JSON log. */
export interface ServerLogRecord {
  readonly level: string;
  readonly time: string;
  readonly role: string;
  readonly msg: string;
  readonly operation?: string;
  readonly actionDigest?: string;
  readonly invocationId?: string;
  readonly [key: string]: unknown;
}

/**
 * The records of a server's stderr, which must be JSON lines only (pino's, with level, time, role
 * and msg); a line still being written (no newline yet) is left for the next call.
 */
export function parseServerLog(stderr: string): ServerLogRecord[] {
  const complete = stderr.slice(0, stderr.lastIndexOf('\n') + 1);
  return complete
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      let record: ServerLogRecord;
      try {
        record = JSON.parse(line) as ServerLogRecord;
      } catch {
        throw new Error(`not a JSON log line: ${line}`);
      }
      for (const key of ['level', 'time', 'role', 'msg'] as const) {
        if (typeof record[key] !== 'string') throw new Error(`log line without a string "${key}": ${line}`);
      }
      return record;
    });
}

/** The server's stderr as Kiln prints it on a terminal (`INFO: message (field=…)`), after checking every line is a JSON record. */
export function serverLogText(stderr: string): string {
  parseServerLog(stderr);
  const complete = stderr.slice(0, stderr.lastIndexOf('\n') + 1);
  return complete
    .split('\n')
    .filter((line) => line !== '')
    .map(formatLogLine)
    .join('');
}
