import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { ConfigError, ExitCode, parseConfigText, UsageError } from '../../core/index.js';
import { parseStorageNodeConfig, parseStorageRoleConfig, runCacheServer, type ConfigOverrides } from '../../../scheduler/index.js';
import { BlobAccessConfigError } from '../../core/blobstore/index.js';
import { CommandOptions, intOption, nonEmpty, textOption } from '../command-options.js';
import type { CliIO } from '../io.js';
import { SERVER_INTERRUPT_GRACE_MS } from '../process-cli-io.js';
import { serverLogOf } from '../server-log.js';

const USAGE = `Usage: kiln storage --config FILE [options]

Serves a storage node in the foreground until interrupted (Ctrl-C): the CAS, the action cache,
ByteStream and Capabilities of its own store (no Execution), for schedulers whose storage config
shards and mirrors blobs over several nodes ("grpc", "sharding", "mirrored": see
scheduler/README.md). Prints its endpoint grpc://HOST:PORT (grpcs:// with TLS) as the first line of
stdout.
`;

export const OPTIONS = new CommandOptions(USAGE, [
  {
    title: 'Options',
    definitions: [
      textOption('config', 'JSON config: "storage" (or "instances"), limits, instance names, "tls" and "auth", as the scheduler\'s (see scheduler/README.md)'),
      textOption('storage', 'keep blobs in block files under DIR (instead of the config\'s "storage")'),
      intOption('port', "port to listen on; 0 picks a free one (default 0, or the config's)", 0, 65535),
      textOption('host', 'address to listen on (default 127.0.0.1)'),
    ],
  },
]);

interface StorageArgs {
  config?: string;
  storage?: string;
  port?: number;
  host?: string;
}

function parseArgs(args: readonly string[]): StorageArgs {
  const parsed = OPTIONS.parse(args);
  if (parsed.residue.length > 0) throw new UsageError(`unexpected argument '${parsed.residue[0]}'`);
  const config = nonEmpty(parsed, 'config', 'a file');
  const storage = nonEmpty(parsed, 'storage', 'a directory');
  const host = nonEmpty(parsed, 'host', 'an address');
  if (config === undefined && storage === undefined) throw new UsageError('give --config FILE (or at least --storage DIR)');
  return {
    ...(config !== undefined ? { config } : {}),
    ...(storage !== undefined ? { storage } : {}),
    ...(host !== undefined ? { host } : {}),
    ...(parsed.values.isSet('port') ? { port: parsed.values.getInt('port') } : {}),
  };
}

/** `kiln storage`: one storage node. */
export async function main(args: string[], io: CliIO): Promise<number> {
  if (args[0] === 'help' || args[0] === '--help' || args[0] === '-h') {
    io.stdout.write(OPTIONS.help());
    return ExitCode.SUCCESS;
  }
  let config;
  try {
    const parsed = parseArgs(args);
    const overrides: ConfigOverrides = {
      ...(parsed.host !== undefined ? { host: parsed.host } : {}),
      ...(parsed.port !== undefined ? { port: parsed.port } : {}),
      ...(parsed.storage !== undefined ? { storageDir: resolve(io.cwd, parsed.storage) } : {}),
    };
    if (parsed.config === undefined) {
      config = parseStorageNodeConfig({}, '(defaults)', io.cwd, overrides);
    } else {
      const file = resolve(io.cwd, parsed.config);
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (e) {
        throw new UsageError(`--config: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      }
      config = parseConfigText(text, parsed.config, (json) => parseStorageRoleConfig(json, dirname(file), overrides));
    }
  } catch (e) {
    if (!(e instanceof UsageError || e instanceof ConfigError)) throw e;
    io.stderr.write(`ERROR: ${e.message}\n${e instanceof UsageError ? OPTIONS.help() : ''}`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  const log = serverLogOf(io, 'storage');
  io.setInterruptGrace?.(SERVER_INTERRUPT_GRACE_MS);
  try {
    await runCacheServer(config, { stdout: (line) => io.stdout.write(line), log }, io.interrupted ?? new Promise<void>(() => undefined));
  } catch (e) {
    const message = (e as Error).message;
    if (e instanceof BlobAccessConfigError) {
      io.stderr.write(`ERROR: ${message}\n`);
      return ExitCode.COMMAND_LINE_ERROR;
    }
    if (/EADDRINUSE|address already in use|No address added/i.test(message)) {
      io.stderr.write(`ERROR: cannot listen on ${config.host}:${config.port}: ${message}\n`);
      return ExitCode.BUILD_FAILURE;
    }
    throw e;
  }
  return ExitCode.SUCCESS;
}
