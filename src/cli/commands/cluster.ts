import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { ExitCode } from '../../core/index.js';
import { CacheServerConfigError, parseCacheServerConfig, runCacheServer, type ConfigOverrides } from '../../../scheduler/index.js';
import type { CliIO } from '../io.js';

const USAGE = `Usage: kiln cluster up [options]

Starts Kiln's REAPI cluster in the foreground until interrupted (Ctrl-C), and prints its endpoint
grpc://HOST:PORT as the first line of stdout (for --remote_cache / --remote_executor).

Options:
  --executors N    executors to start; 0 serves the remote cache alone (default 0)
  --port N         port to listen on; 0 picks a free one (default 0, or the config's)
  --host ADDR      address to listen on (default 127.0.0.1)
  --storage DIR    keep blobs on disk in DIR (default: in memory)
  --config FILE    JSON config: storage, limits, instance names (see scheduler/README.md)
`;

interface ClusterUpArgs {
  executors: number;
  port?: number;
  host?: string;
  storage?: string;
  config?: string;
}

class UsageProblem extends Error {}

const VALUE_FLAGS = new Set(['executors', 'port', 'host', 'storage', 'config']);

function parseUpArgs(args: string[]): ClusterUpArgs {
  const parsed: ClusterUpArgs = { executors: 0 };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const m = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    if (!m) throw new UsageProblem(`unexpected argument '${arg}'`);
    const flag = m[1]!;
    if (!VALUE_FLAGS.has(flag)) throw new UsageProblem(`unrecognized option: --${flag}`);
    let value = m[2];
    if (value === undefined) {
      value = args[++i];
      if (value === undefined) throw new UsageProblem(`--${flag} expects a value`);
    }
    switch (flag) {
      case 'executors':
        parsed.executors = integerFlag(flag, value, 0, 1024);
        break;
      case 'port':
        parsed.port = integerFlag(flag, value, 0, 65535);
        break;
      case 'host':
        if (value === '') throw new UsageProblem('--host expects an address');
        parsed.host = value;
        break;
      case 'storage':
        if (value === '') throw new UsageProblem('--storage expects a directory');
        parsed.storage = value;
        break;
      case 'config':
        if (value === '') throw new UsageProblem('--config expects a file');
        parsed.config = value;
        break;
    }
  }
  return parsed;
}

function integerFlag(flag: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageProblem(`--${flag}: expected an integer from ${min} to ${max}, got '${value}'`);
  }
  return Number(value);
}

/** `kiln cluster up`: the cache server now; executors and the scheduler arrive with remote execution. */
export async function main(args: string[], io: CliIO): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === 'help' || sub === '--help' || sub === '-h') {
    io.stdout.write(USAGE);
    return sub === undefined ? ExitCode.COMMAND_LINE_ERROR : ExitCode.SUCCESS;
  }
  if (sub !== 'up') {
    io.stderr.write(`ERROR: unknown cluster subcommand '${sub}' (expected 'up'). Try 'kiln cluster help'.\n`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  let parsed: ClusterUpArgs;
  try {
    parsed = parseUpArgs(rest);
  } catch (e) {
    if (!(e instanceof UsageProblem)) throw e;
    io.stderr.write(`ERROR: ${e.message}\n${USAGE}`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  if (parsed.executors > 0) {
    io.stderr.write(
      `ERROR: --executors ${parsed.executors}: remote execution is not available yet; use --executors 0 to serve the remote cache alone.\n`,
    );
    return ExitCode.COMMAND_LINE_ERROR;
  }

  const overrides: ConfigOverrides = {
    ...(parsed.host !== undefined ? { host: parsed.host } : {}),
    ...(parsed.port !== undefined ? { port: parsed.port } : {}),
    ...(parsed.storage !== undefined ? { storageDir: resolve(io.cwd, parsed.storage) } : {}),
  };
  let config;
  try {
    if (parsed.config !== undefined) {
      const file = resolve(io.cwd, parsed.config);
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (e) {
        io.stderr.write(`ERROR: --config: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}\n`);
        return ExitCode.COMMAND_LINE_ERROR;
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch (e) {
        io.stderr.write(`ERROR: ${parsed.config}: not valid JSON: ${(e as Error).message}\n`);
        return ExitCode.COMMAND_LINE_ERROR;
      }
      config = parseCacheServerConfig(json, parsed.config, dirname(file), overrides);
    } else {
      config = parseCacheServerConfig({}, '(defaults)', io.cwd, overrides);
    }
  } catch (e) {
    if (!(e instanceof CacheServerConfigError)) throw e;
    io.stderr.write(`ERROR: ${e.message}\n`);
    return ExitCode.COMMAND_LINE_ERROR;
  }

  const log = {
    info: (m: string) => io.stderr.write(`INFO: ${m}\n`),
    warn: (m: string) => io.stderr.write(`WARNING: ${m}\n`),
  };
  try {
    await runCacheServer(config, { stdout: (line) => io.stdout.write(line), log }, io.interrupted ?? new Promise<void>(() => undefined));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const message = (e as Error).message;
    if (code === 'EADDRINUSE' || /EADDRINUSE|address already in use|No address added/i.test(message)) {
      io.stderr.write(`ERROR: cannot listen on ${config.host}:${config.port}: ${message}\n`);
      return ExitCode.BUILD_FAILURE;
    }
    if (e instanceof Error && 'format' in e) {
      io.stderr.write(`ERROR: ${(e as Error & { format(): string }).format()}\n`);
      return ExitCode.BUILD_FAILURE;
    }
    throw e;
  }
  return ExitCode.SUCCESS;
}
