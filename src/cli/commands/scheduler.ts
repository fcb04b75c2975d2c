import { ExitCode } from '../../core/index.js';
import type { CliIO } from '../io.js';
import { CommandOptions } from '../command-options.js';
import { SERVER_OPTION_GROUP, serveCluster } from './cluster.js';

const USAGE = `Usage: kiln scheduler [options]

Serves Kiln's REAPI scheduler in the foreground until interrupted (Ctrl-C): the remote cache, the
Execution and Operations APIs, and the worker protocol that 'kiln executor' connects to. Prints its
endpoint grpc://HOST:PORT (grpcs:// with TLS) as the first line of stdout. Without "tls" and "auth"
in its config the port is plain and open: keep it on loopback.
`;

export const OPTIONS = new CommandOptions(USAGE, [SERVER_OPTION_GROUP]);

/** `kiln scheduler`: `kiln cluster up` without executors. */
export async function main(args: string[], io: CliIO): Promise<number> {
  if (args[0] === 'help' || args[0] === '--help' || args[0] === '-h') {
    io.stdout.write(OPTIONS.help());
    return ExitCode.SUCCESS;
  }
  const own = args.find((a) => /^--(executors|runner|slots|(max-)?(memory|pids|cpu)-limit)(=|$)/.test(a));
  if (own) {
    io.stderr.write(`ERROR: Unrecognized option: ${own.split('=')[0]} (start executors with 'kiln executor' or 'kiln cluster up')\n${OPTIONS.help()}`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  return serveCluster(args, io, OPTIONS, 'scheduler');
}
