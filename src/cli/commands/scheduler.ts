import { ExitCode } from '../../core/index.js';
import type { CliIO } from '../io.js';
import { serveCluster } from './cluster.js';

const USAGE = `Usage: kiln scheduler [options]

Serves Kiln's REAPI scheduler in the foreground until interrupted (Ctrl-C): the remote cache, the
Execution and Operations APIs, and the worker protocol that 'kiln executor' connects to. Prints its
endpoint grpc://HOST:PORT (grpcs:// with TLS) as the first line of stdout.

Options:
  --port N         port to listen on; 0 picks a free one (default 0, or the config's)
  --host ADDR      address to listen on (default 127.0.0.1)
  --storage DIR    keep blobs on disk in DIR (default: in memory)
  --config FILE    JSON config: storage, limits, instance names, "tls" and "auth" (see
                   scheduler/README.md); without them the port is plain and open: keep it on loopback
`;

/** `kiln scheduler`: `kiln cluster up` without executors. */
export async function main(args: string[], io: CliIO): Promise<number> {
  if (args[0] === 'help' || args[0] === '--help' || args[0] === '-h') {
    io.stdout.write(USAGE);
    return ExitCode.SUCCESS;
  }
  const own = args.find((a) => /^--(executors|runner|slots|(max-)?(memory|pids|cpu)-limit)(=|$)/.test(a));
  if (own) {
    io.stderr.write(`ERROR: unrecognized option: ${own.split('=')[0]} (start executors with 'kiln executor' or 'kiln cluster up')\n${USAGE}`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  return serveCluster(args, io, USAGE, 'scheduler');
}
