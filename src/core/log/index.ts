// Server logs (pino): its own entry, so client commands do not load pino.
export type { LogFields, ServerLog, ServerLogger } from './server-log.js';
export { createServerLog, formatLogLine, logFormatFor, type LogFormat, type ServerLogOptions } from './server-logger.js';
