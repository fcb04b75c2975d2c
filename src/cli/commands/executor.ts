import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError, ExitCode, isStatusError, parseConfigText, UsageError } from '../../core/index.js';
import {
  describeResourceLimitPolicy,
  defaultImageOf,
  readExecutorConfigFile,
  resolveExecutorConfig,
  removeDeadWorkDirectories,
  assignmentFields,
  startExecutor,
  type ExecutorConfig,
  type ExecutorConfigFile,
  type ExecutorConfigKey,
  type RunningExecutor,
} from '../../../executor/index.js';
import { CommandOptions, givenTexts, repeatedOption, textOption } from '../command-options.js';
import type { CliIO } from '../io.js';
import { SERVER_INTERRUPT_GRACE_MS } from '../process-cli-io.js';
import { serverLogOf } from '../server-log.js';
import type { ServerLogger } from '../../core/log/index.js';

const USAGE = `Usage: kiln executor --scheduler grpc[s]://HOST:PORT [options]

Runs one executor in the foreground until interrupted (Ctrl-C): it connects to the scheduler,
announces its platform and slots, and runs the actions it is assigned.

The docker runner enforces the limits in each container; the local runner through cgroups, where
this process may make them (cgroup v2 delegated to it, or v1 as root), and says at start when not.
Every option may also be a key of the --config file (flags win).
`;

const LIMITS_HELP =
  'how far an action may raise its limits with the platform properties max-mem, max-pids and max-cores (default: the limits above, so actions may only lower them)';

type Flag = ExecutorConfigKey | 'config';

/** The help of each option; a key the executor's config gains must be given one here (the type says so). */
const HELP: Readonly<Record<Flag, string>> = {
  scheduler: "the scheduler's endpoint, as printed by 'kiln scheduler' (required); grpcs:// is TLS",
  'tls-ca': "PEM CA the scheduler's certificate must chain to (default: the system's roots)",
  'tls-certificate': 'PEM client certificate for mutual TLS (with --tls-key)',
  'tls-key': 'PEM client key for mutual TLS (with --tls-certificate)',
  'token-file':
    'a file holding this executor\'s token, sent as "authorization: Bearer TOKEN" (a secured scheduler refuses an executor without the worker role)',
  runner: 'local (namespace sandbox when available) or docker (default local)',
  slots: 'actions run at once (default: the number of CPUs)',
  platform: 'a platform property NAME=VALUE to announce; OSFamily=linux is implied',
  instance: 'the REAPI instance name to serve (default "")',
  'work-dir': 'file cache and build directories (default: one under the temp dir, removed on stop)',
  'cache-size': 'bound of the local file cache in bytes (default 8 GiB)',
  name: 'shown in logs and ExecutedActionMetadata.worker (default: the host name)',
  image: "the docker runner's image for actions without a container-image property (default: Kiln's base image, built once from deploy/base-image)",
  'memory-limit': 'memory of each action, no swap (1073741824, 512m, 1g; 0: none) (default 1g)',
  'pids-limit': 'processes and threads of each action at once (0: none) (default 256)',
  'cpu-limit': "CPUs' worth of time of each action (fractions allowed; 0: none) (default 2)",
  'max-memory-limit': LIMITS_HELP,
  'max-pids-limit': LIMITS_HELP,
  'max-cpu-limit': LIMITS_HELP,
  'health-port':
    "serve gRPC health checking (grpc.health.v1.Health, plaintext, all interfaces) on this port: SERVING while the executor takes work, for Kubernetes' grpc probe",
  'metrics-port': 'serve Prometheus metrics at http://HOST:N/metrics (plaintext, all interfaces)',
  'drain-timeout':
    'on SIGTERM or Ctrl-C, take no more work and let running actions finish for up to S seconds before aborting them (default 0: abort at once; the scheduler retries aborted actions elsewhere); a second signal aborts at once',
  config: 'JSON object with any of the keys above (flags win)',
};

/** `kiln executor`'s options: every config key, as text (checked by the config resolution, with its file's). */
export const OPTIONS = new CommandOptions(USAGE, [
  {
    title: 'Options',
    definitions: (Object.keys(HELP) as Flag[]).map((name) => (name === 'platform' ? repeatedOption(name, HELP[name]) : textOption(name, HELP[name]))),
  },
]);

function parseArgs(args: string[]): Map<Flag, string[]> {
  const parsed = OPTIONS.parse(args);
  if (parsed.residue.length > 0) throw new UsageError(`unexpected argument '${parsed.residue[0]}'`);
  return givenTexts(parsed.occurrences) as Map<Flag, string[]>;
}

async function configOf(flags: Map<Flag, string[]>, io: CliIO): Promise<ExecutorConfig> {
  let file: ExecutorConfigFile = { limits: {} };
  const configPath = flags.get('config')?.at(-1);
  if (configPath !== undefined) {
    const path = resolve(io.cwd, configPath);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (e) {
      throw new UsageError(`--config: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    file = parseConfigText(text, configPath, (json) => readExecutorConfigFile(json));
  }
  return resolveExecutorConfig({
    flags,
    file,
    ...(configPath !== undefined ? { fileName: configPath } : {}),
    cwd: io.cwd,
    defaultWorkDirectory: defaultWorkDirectory(),
    ...(io.env.DOCKER_HOST ? { dockerHost: io.env.DOCKER_HOST } : {}),
  });
}

/**
 * Where an executor works when not told: a directory of its own, removed when it stops (and, when it
 * was killed, by the next executor that starts).
 */
const DEFAULT_WORK_DIRECTORY_PREFIX = 'kiln-executor-';
function defaultWorkDirectory(): string {
  return join(tmpdir(), `${DEFAULT_WORK_DIRECTORY_PREFIX}${process.pid}`);
}

/** Lets running actions finish for up to `ms`; says which way it ended. */
async function drainWithin(running: RunningExecutor, ms: number, log: ServerLogger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), ms)));
  const done = await Promise.race([running.drain().then(() => false), timedOut]);
  clearTimeout(timer);
  log.info(done ? `drain: actions still running after ${ms / 1000}s: aborting them` : 'drained: every running action finished');
}

/** `kiln executor`: one worker connected to a scheduler. */
export async function main(args: string[], io: CliIO): Promise<number> {
  if (args[0] === 'help' || args[0] === '--help' || args[0] === '-h') {
    io.stdout.write(OPTIONS.help());
    return ExitCode.SUCCESS;
  }
  let config: ExecutorConfig;
  try {
    config = await configOf(parseArgs(args), io);
  } catch (e) {
    if (!(e instanceof UsageError) && !(e instanceof ConfigError)) throw e;
    io.stderr.write(`ERROR: ${e.message}\n${OPTIONS.help()}`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  const serverLog = serverLogOf(io, 'executor');
  const log = (m: string) => serverLog.warn(m);
  for (const path of await removeDeadWorkDirectories(tmpdir(), DEFAULT_WORK_DIRECTORY_PREFIX)) {
    serverLog.info(`removed ${path}, left by an executor that was killed`);
  }
  let running;
  try {
    if (config.runner === 'docker') {
      const defaultImage = await defaultImageOf(config.dockerHost ?? 'unix:///var/run/docker.sock', config.defaultImage, (m) => serverLog.info(m));
      config = { ...config, defaultImage };
    }
    // One line per action, so an operator (and the multi-host test) sees where each one ran.
    const name = config.name;
    running = await startExecutor(config, log, undefined, (a) =>
      serverLog.info(`executor ${name} runs action ${a.actionDigest?.hash ?? '?'}/${a.actionDigest?.sizeBytes ?? '?'}`, assignmentFields(a)),
    );
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr.write(`ERROR: ${e.message}\n`);
      return ExitCode.COMMAND_LINE_ERROR;
    }
    if (!isStatusError(e)) throw e;
    io.stderr.write(`ERROR: --runner ${config.runner}: ${e.message}\n`);
    return ExitCode.BUILD_FAILURE;
  }
  serverLog.info(`executor ${config.name} (${running.runner}, ${config.slots} slot(s)) working for ${config.scheduler}`);
  if (running.metricsUrl) serverLog.info(`metrics at ${running.metricsUrl}`);
  serverLog.info(
    running.limits ? `limits (${running.limits}): ${describeResourceLimitPolicy(config.limits!)}` : 'no limits: actions may use all memory, processes and CPUs',
  );
  const drainMs = config.drainTimeoutMs ?? 0;
  io.setInterruptGrace?.(drainMs + SERVER_INTERRUPT_GRACE_MS);
  const refusal = await Promise.race([(io.interrupted ?? new Promise<void>(() => undefined)).then(() => undefined), running.refused]);
  if (refusal !== undefined) serverLog.error(refusal);
  else if (drainMs > 0) {
    serverLog.info(`interrupted: taking no more work; running actions may finish within ${drainMs / 1000}s`);
    await drainWithin(running, drainMs, serverLog);
  } else serverLog.info('interrupted: stopping');
  await running.stop();
  // Without --work-dir the directory was this process's own (named by its pid): nothing reuses it.
  if (config.workDirectory === defaultWorkDirectory()) await rm(config.workDirectory, { recursive: true, force: true });
  return refusal === undefined ? ExitCode.SUCCESS : ExitCode.REMOTE_ERROR;
}
