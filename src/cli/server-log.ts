import { createServerLog, logFormatFor, type ServerLogger } from '../core/log/index.js';
import type { CliIO } from './io.js';

/**
 * The log of a server role on the command's stderr: pino JSON lines, or Kiln's `INFO: …` lines on a
 * terminal; `KILN_LOG_FORMAT=json|text` chooses either way.
 */
export function serverLogOf(io: CliIO, role: string): ServerLogger {
  return createServerLog({
    role,
    format: logFormatFor(io.stderrIsTTY === true, io.env.KILN_LOG_FORMAT),
    write: (line) => io.stderr.write(line),
  });
}
