export { runCli } from './main.js';
export type { CliIO, CommandMain } from './io.js';
