import { pino } from 'pino';
import type { LogFields, ServerLogger } from './server-log.js';

/** `json`: one object per line, for log collectors; `text`: Kiln's `INFO: message` lines, for a terminal. */
export type LogFormat = 'json' | 'text';

export interface ServerLogOptions {
  /** The server role (`scheduler`, `storage`, `executor`, `cluster`): on every line. */
  readonly role: string;
  /** Takes each finished line, newline included (stderr). */
  readonly write: (line: string) => void;
  readonly format: LogFormat;
}

/**
 * A server role's log through pino: JSON lines `{"level":"info","time":"…","role":"…","msg":"…",
 * "operation":…}` for collectors, or the same lines formatted for people on a terminal (a formatter
 * of our own: pino-pretty is not a dependency). Lines are written synchronously, in order.
 */
export function createServerLog(options: ServerLogOptions): ServerLogger {
  const destination = options.format === 'json' ? { write: options.write } : { write: (line: string) => options.write(formatLogLine(line)) };
  const logger = pino(
    {
      base: { role: options.role },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
  return {
    info: (message, fields) => logger.info(definedOnly(fields), message),
    warn: (message, fields) => logger.warn(definedOnly(fields), message),
    error: (message, fields) => logger.error(definedOnly(fields), message),
  };
}

/** The format for a stream: text on a terminal, JSON otherwise; `KILN_LOG_FORMAT` (json or text) decides when set. */
export function logFormatFor(isTTY: boolean, override: string | undefined): LogFormat {
  if (override === 'json' || override === 'text') return override;
  return isTTY ? 'text' : 'json';
}

const LEVEL_WORDS: Record<string, string> = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warn: 'WARNING', error: 'ERROR', fatal: 'FATAL' };
/** Fields every line has, left out of the text form (the terminal shows one role's lines, as they come). */
const IMPLICIT = new Set(['level', 'time', 'role', 'msg', 'pid', 'hostname']);

/** One JSON line as Kiln prints it to a terminal: `INFO: message (operation=…, actionDigest=…)`. */
export function formatLogLine(jsonLine: string): string {
  const record = JSON.parse(jsonLine) as Record<string, unknown>;
  const extra = Object.entries(record)
    .filter(([key]) => !IMPLICIT.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  const level = LEVEL_WORDS[String(record.level)] ?? String(record.level).toUpperCase();
  return `${level}: ${String(record.msg)}${extra.length > 0 ? ` (${extra.join(', ')})` : ''}\n`;
}

function definedOnly(fields: LogFields | undefined): Record<string, unknown> {
  if (!fields) return {};
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined && value !== ''));
}
