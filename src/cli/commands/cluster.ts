import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { ConfigError, ExitCode, isStatusError, parseConfigText, UsageError } from '../../core/index.js';
import { newMetricsRegistry } from '../../core/metrics/index.js';
import {
  createExecutionServer,
  newServiceAccount,
  newToken,
  parseSchedulerRoleConfig,
  runCacheServer,
  type ConfigOverrides,
} from '../../../scheduler/index.js';
import {
  DEFAULT_CACHE_BYTES,
  RESOURCE_LIMIT_KEYS,
  defaultResourceLimitPolicy,
  describeResourceLimitPolicy,
  defaultImageOf,
  parseResourceLimitPolicy,
  pingDockerEngine,
  schedulerCredentialsOf,
  removeDeadWorkDirectories,
  assignmentFields,
  startExecutor,
  type ResourceLimitPolicy,
  type RunningExecutor,
  type SchedulerCredentials,
} from '../../../executor/index.js';
import { parseClusterUpConfig, type ClusterUpConfig } from '../cluster-up-config.js';
import { CommandOptions, intOption, nonEmpty, type OptionGroup, textOption } from '../command-options.js';
import type { CliIO } from '../io.js';
import { SERVER_INTERRUPT_GRACE_MS } from '../process-cli-io.js';
import { serverLogOf } from '../server-log.js';

const USAGE = `Usage: kiln cluster up [options]
       kiln cluster token NAME
       kiln cluster service-account NAME EMAIL TOKEN_URI DIR

Starts Kiln's REAPI cluster in the foreground until interrupted (Ctrl-C): the cache server, the
scheduler (Execution and Operations APIs, worker protocol) and N executors, all on loopback. Prints
its endpoint grpc://HOST:PORT as the first line of stdout (for --remote_cache / --remote_executor).

Without "tls" and "auth" the port is plain and every call is served: keep it on loopback.

'kiln cluster token NAME' prints a new random token (line 1, for its holder) and the line to add to
the token file of "auth" (line 2: its SHA-256 and NAME; the file never holds the token itself).

'kiln cluster service-account NAME EMAIL TOKEN_URI DIR' makes a service account for clients that
cannot send a header on every call (Bazel 2.1.0: --google_credentials=DIR/NAME.json): writes its key
file DIR/NAME.json (private: give it to the client only) and DIR/NAME.pub.pem, and prints the
"auth.serviceAccounts" entry; its access tokens act as the token NAME ("token:NAME" roles).
`;

interface ClusterUpArgs {
  executors: number;
  runner: 'local' | 'docker';
  slots?: number;
  image?: string;
  port?: number;
  host?: string;
  storage?: string;
  config?: string;
  /** The resource-limit flags as given (RESOURCE_LIMIT_KEYS). */
  limits: Record<string, string>;
}

/** The options of the scheduler's server, `kiln scheduler`'s and `kiln cluster up`'s. */
export const SERVER_OPTION_GROUP: OptionGroup = {
  title: 'Server options',
  definitions: [
    intOption('port', "port to listen on; 0 picks a free one (default 0, or the config's)", 0, 65535),
    textOption('host', 'address to listen on (default 127.0.0.1)'),
    textOption('storage', 'keep blobs on disk in DIR (default: in memory)'),
    textOption(
      'config',
      'JSON config: storage, limits, instance names, "tls" and "auth" (see scheduler/README.md), and for kiln cluster up an "executor" object with the executor options below (e.g. {"memory-limit": "2g"}) and the executors\' "tls-ca", "tls-certificate", "tls-key", "token-file"',
    ),
  ],
};

const LIMIT_HELP: Readonly<Record<(typeof RESOURCE_LIMIT_KEYS)[number], string>> = {
  'memory-limit': "each action's memory (512m, 1g; no swap); 0: none (default 1g)",
  'pids-limit': "each action's processes and threads at once; 0: none (default 256)",
  'cpu-limit': "each action's CPUs (fractions allowed); 0: none (default 2)",
  'max-memory-limit': 'how far an action may raise its memory with the platform property max-mem (default: no higher than --memory-limit)',
  'max-pids-limit': 'how far an action may raise its processes with the platform property max-pids (default: no higher than --pids-limit)',
  'max-cpu-limit': 'how far an action may raise its CPUs with the platform property max-cores (default: no higher than --cpu-limit)',
};

export const OPTIONS = new CommandOptions(USAGE, [
  SERVER_OPTION_GROUP,
  {
    title: 'Executor options',
    definitions: [
      intOption('executors', "executors to start (default 0: executors may connect with 'kiln executor')", 0, 1024),
      {
        name: 'runner',
        type: 'string',
        default: 'local',
        allowed: { values: ['local', 'docker'], describe: 'runner' },
        help: 'how executors run actions: local (namespace sandbox when available) or docker (engine at DOCKER_HOST or the default socket)',
      },
      intOption('slots', 'actions each executor runs at once (default: the number of CPUs)', 1, 1024),
      textOption(
        'image',
        "the docker runner's image for actions without a container-image property (default: Kiln's base image, built once from deploy/base-image)",
      ),
      ...RESOURCE_LIMIT_KEYS.map((key) => textOption(key, LIMIT_HELP[key])),
    ],
  },
]);

function parseUpArgs(options: CommandOptions, args: readonly string[]): ClusterUpArgs {
  const parsed = options.parse(args);
  if (parsed.residue.length > 0) throw new UsageError(`unexpected argument '${parsed.residue[0]}'`);
  const { values } = parsed;
  const has = (name: string) => values.registry.get(name) !== undefined && values.isSet(name);
  const image = has('image') ? nonEmpty(parsed, 'image', 'an image name') : undefined;
  const host = nonEmpty(parsed, 'host', 'an address');
  const storage = nonEmpty(parsed, 'storage', 'a directory');
  const config = nonEmpty(parsed, 'config', 'a file');
  const limits: Record<string, string> = {};
  // The resource-limit flags, checked with the config's values.
  for (const key of RESOURCE_LIMIT_KEYS) if (has(key)) limits[key] = values.getString(key);
  return {
    executors: has('executors') ? values.getInt('executors') : 0,
    runner: has('runner') ? (values.getString('runner') as 'local' | 'docker') : 'local',
    ...(has('slots') ? { slots: values.getInt('slots') } : {}),
    ...(image !== undefined ? { image } : {}),
    ...(values.isSet('port') ? { port: values.getInt('port') } : {}),
    ...(host !== undefined ? { host } : {}),
    ...(storage !== undefined ? { storage } : {}),
    ...(config !== undefined ? { config } : {}),
    limits,
  };
}

/** `kiln cluster up`: cache server, scheduler and executors in one process. */
export async function main(args: string[], io: CliIO): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === 'help' || sub === '--help' || sub === '-h') {
    io.stdout.write(OPTIONS.help());
    return sub === undefined ? ExitCode.COMMAND_LINE_ERROR : ExitCode.SUCCESS;
  }
  if (sub === 'token') return printNewToken(rest, io);
  if (sub === 'service-account') return writeServiceAccount(rest, io);
  if (sub !== 'up') {
    io.stderr.write(`ERROR: unknown cluster subcommand '${sub}' (expected 'up', 'token' or 'service-account'). Try 'kiln cluster help'.\n`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  return serveCluster(rest, io, OPTIONS, 'cluster');
}

/** `kiln cluster service-account NAME EMAIL TOKEN_URI DIR`: a key file for the client, the public key for the config. */
function writeServiceAccount(args: string[], io: CliIO): number {
  if (args.length !== 4) {
    io.stderr.write(`ERROR: expected NAME EMAIL TOKEN_URI DIR\n${OPTIONS.help()}`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  const [name, email, tokenUri, dir] = args as [string, string, string, string];
  try {
    const { keyFile, publicKeyPem } = newServiceAccount(name, email, tokenUri);
    const out = resolve(io.cwd, dir);
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, `${name}.json`), keyFile, { mode: 0o600, flag: 'wx' });
    writeFileSync(join(out, `${name}.pub.pem`), publicKeyPem, { flag: 'wx' });
    io.stdout.write(`${JSON.stringify({ [name]: { email, publicKey: join(out, `${name}.pub.pem`) } })}\n`);
    return ExitCode.SUCCESS;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    io.stderr.write(`ERROR: ${code === 'EEXIST' ? `${dir} already holds a key of ${name}; not overwritten` : (e as Error).message}\n`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
}

/** `kiln cluster token NAME`: a new token and its token file line. */
function printNewToken(args: string[], io: CliIO): number {
  if (args.length !== 1) {
    io.stderr.write(`ERROR: expected one NAME, the token holder's name in the token file\n${OPTIONS.help()}`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  try {
    const { token, line } = newToken(args[0]!);
    io.stdout.write(`${token}\n${line}\n`);
    return ExitCode.SUCCESS;
  } catch (e) {
    if (!isStatusError(e)) throw e;
    io.stderr.write(`ERROR: ${e.message}\n`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
}

/** Runs the server (and executors) of `kiln cluster up` and `kiln scheduler`. */
export async function serveCluster(rest: string[], io: CliIO, options: CommandOptions, role: 'cluster' | 'scheduler'): Promise<number> {
  let parsed: ClusterUpArgs;
  try {
    parsed = parseUpArgs(options, rest);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.stderr.write(`ERROR: ${e.message}\n${options.help()}`);
    return ExitCode.COMMAND_LINE_ERROR;
  }

  const overrides: ConfigOverrides = {
    ...(parsed.host !== undefined ? { host: parsed.host } : {}),
    ...(parsed.port !== undefined ? { port: parsed.port } : {}),
    ...(parsed.storage !== undefined ? { storageDir: resolve(io.cwd, parsed.storage) } : {}),
  };
  let config;
  let schedulerConfig;
  let limits: ResourceLimitPolicy;
  let executorCredentials: SchedulerCredentials = {};
  try {
    let clusterConfig: ClusterUpConfig;
    if (parsed.config !== undefined) {
      const file = resolve(io.cwd, parsed.config);
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (e) {
        io.stderr.write(`ERROR: --config: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}\n`);
        return ExitCode.COMMAND_LINE_ERROR;
      }
      // `kiln scheduler` reads the scheduler's config; `kiln cluster up` also its executors' section.
      clusterConfig = parseConfigText(text, parsed.config, (json) =>
        role === 'scheduler'
          ? { scheduler: parseSchedulerRoleConfig(json, dirname(file), overrides), executor: { limits: {}, credentialFiles: {} } }
          : parseClusterUpConfig(json, dirname(file), overrides),
      );
    } else {
      clusterConfig = parseClusterUpConfig({}, io.cwd, overrides);
    }
    config = clusterConfig.scheduler.server;
    schedulerConfig = clusterConfig.scheduler.execution;
    executorCredentials = schedulerCredentialsOf(clusterConfig.executor.credentialFiles);
    limits = parseResourceLimitPolicy(
      { ...clusterConfig.executor.limits, ...parsed.limits },
      defaultResourceLimitPolicy(availableParallelism()),
      (field, message) => {
        if (field in parsed.limits) throw new UsageError(`--${field}: ${message}`);
        throw new ConfigError(`${parsed.config}: executor.${field}: ${message}`);
      },
    );
  } catch (e) {
    if (!(e instanceof ConfigError) && !(e instanceof UsageError)) throw e;
    io.stderr.write(`ERROR: ${e.message}\n`);
    return ExitCode.COMMAND_LINE_ERROR;
  }

  const log = serverLogOf(io, role);
  let defaultImage: string | undefined;
  if (parsed.executors > 0 && parsed.runner === 'docker') {
    try {
      await pingDockerEngine(io.env.DOCKER_HOST);
      defaultImage = await defaultImageOf(io.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock', parsed.image, (m) => log.info(m));
    } catch (e) {
      if (!isStatusError(e)) throw e;
      io.stderr.write(`ERROR: --runner docker: ${e.message}\n`);
      return ExitCode.BUILD_FAILURE;
    }
  }
  // One registry for the server, its scheduler and the executors started here: one /metrics for the cluster.
  const metrics = newMetricsRegistry({ processMetrics: config.metricsPort !== undefined });
  const execution = createExecutionServer({ config: schedulerConfig, metrics, log });
  // With auth on, the executors started here hold a token made for them, unless the config gives them credentials.
  const ownToken = config.security.auth.kind === 'on' && parsed.executors > 0 ? randomBytes(32).toString('base64url') : undefined;
  if (ownToken && executorCredentials.token === undefined && executorCredentials.tlsCertificate === undefined) {
    executorCredentials = { ...executorCredentials, token: ownToken };
  }
  const executors: RunningExecutor[] = [];
  let workDirectory: string | undefined;
  const stopExecutors = async () => {
    await Promise.all(executors.map((e) => e.stop()));
    if (workDirectory) await rm(workDirectory, { recursive: true, force: true });
  };
  io.setInterruptGrace?.(schedulerConfig.drainTimeoutMs + SERVER_INTERRUPT_GRACE_MS);
  const interrupted = io.interrupted ?? new Promise<void>(() => undefined);
  const graceMs = schedulerConfig.drainTimeoutMs;
  const draining = async () => {
    if (graceMs > 0) log.info(`draining: taking no more work; running actions may finish within ${graceMs / 1000}s`);
    // The executors started here drain alongside: they finish and report what they run.
    const executorsDrained = Promise.all(executors.map((e) => e.drain()));
    const left = await execution.drain(graceMs);
    if (left === 0) {
      if (graceMs > 0) log.info('drained: every running action finished');
      // Their last reports were confirmed (a drained executor resolves once its report was answered).
      await Promise.race([executorsDrained, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    } else {
      log.info(
        `drain: ${left} action(s) still running after ${graceMs / 1000}s; ${schedulerConfig.operationsFile ? 'the next scheduler resumes them' : 'their clients retry them'}`,
      );
    }
    await stopExecutors();
  };
  try {
    await runCacheServer(config, { stdout: (line) => io.stdout.write(line), log }, interrupted, {
      draining,
      extraServices: (ctx) => execution.services(ctx),
      executionCapabilities: execution.capabilities,
      metrics,
      scheduler: execution.scheduler,
      ...(ownToken ? { clusterExecutorToken: ownToken } : {}),
      started: async (server) => {
        if (parsed.executors === 0) return;
        // Named after this process, so that a later run removes it if this one is killed.
        for (const path of await removeDeadWorkDirectories(tmpdir(), 'kiln-cluster-executors-')) log.info(`removed ${path}, left by a cluster that was killed`);
        workDirectory = await mkdtemp(join(tmpdir(), `kiln-cluster-executors-${process.pid}-`));
        // Searchable, not listable: a root executor's sandboxed actions run as nobody, which must reach their build directory.
        await chmod(workDirectory, 0o711);
        for (let i = 0; i < parsed.executors; i++) {
          const running = await startExecutor(
            {
              scheduler: server.endpoint,
              credentials: executorCredentials,
              instanceName: '',
              name: `executor-${i}`,
              slots: parsed.slots ?? availableParallelism(),
              runner: parsed.runner,
              workDirectory: join(workDirectory, `executor-${i}`),
              cacheBytes: DEFAULT_CACHE_BYTES,
              limits,
              platform: [],
              ...(io.env.DOCKER_HOST ? { dockerHost: io.env.DOCKER_HOST } : {}),
              ...(defaultImage ? { defaultImage } : {}),
            },
            (m) => log.warn(m),
            undefined,
            (a) => log.info(`executor executor-${i} runs action ${a.actionDigest?.hash ?? '?'}/${a.actionDigest?.sizeBytes ?? '?'}`, assignmentFields(a)),
            metrics,
          );
          executors.push(running);
          void running.refused.then((reason) => log.warn(reason));
        }
        log.info(`${parsed.executors} executor(s) started, runner ${executors[0]?.runner}, ${parsed.slots ?? availableParallelism()} slot(s) each`);
        const enforced = executors[0]?.limits;
        log.info(enforced ? `limits (${enforced}): ${describeResourceLimitPolicy(limits)}` : 'no limits: actions may use all memory, processes and CPUs');
      },
    });
  } catch (e) {
    await stopExecutors();
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
  } finally {
    execution.close();
  }
  return ExitCode.SUCCESS;
}
