export { runCli } from './main.js';
export { startSigtermRelay } from './sigterm-relay.js';
export { processCliIO, INTERRUPT_GRACE_MS, SERVER_INTERRUPT_GRACE_MS, type InterruptibleProcess } from './process-cli-io.js';
export type { CliIO, CommandMain } from './io.js';
