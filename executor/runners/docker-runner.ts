import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { availableParallelism, hostname } from 'node:os';
import type { Duplex } from 'node:stream';
import Docker from 'dockerode';
import { FailedPreconditionError, InvalidArgumentError, UnavailableError } from '../../src/core/index.js';
import { containerImageOf } from './container-image.js';
import { grantBuildDirectory } from './grant-build-directory.js';
import { OutputSinkStream } from './output-sink-stream.js';
import { processExists } from './process-exists.js';
import { defaultResourceLimitPolicy, limitsForAction, type ResourceLimitPolicy, type ResourceLimits } from './resource-limits.js';
import type { RunRequest, RunResult, Runner } from './runner.js';
import { resolveWorkingDirectory } from './working-directory.js';

/** Kiln's base image, built by deploy/base-image/build.sh. */
export const KILN_BASE_IMAGE = 'kiln/base:latest';

/** Labels every container the runner creates, so leftovers can be found (there should be none). */
export const CONTAINER_LABEL = 'kiln.runner';
/** The owning executor's identity (see DockerRunnerOptions.owner), and the host and pid of its process. */
export const OWNER_LABEL = 'kiln.executor';
export const OWNER_HOST_LABEL = 'kiln.executor.host';
export const OWNER_PID_LABEL = 'kiln.executor.pid';

export interface DockerRunnerOptions {
  /** Engine address `unix:///path` or `tcp://127.0.0.1:PORT`; default $DOCKER_HOST, then /var/run/docker.sock. */
  readonly dockerHost?: string;
  /** Image when the action has no `container-image` platform property. */
  readonly defaultImage?: string;
  /** The container user `uid:gid`; default the executor's own ids, or 1000:1000 (`kiln`) when it runs as root. */
  readonly user?: string;
  /** Memory, pids and CPU limits of every container; default defaultResourceLimitPolicy. */
  readonly limits?: ResourceLimitPolicy;
  /**
   * Who owns the containers: one executor, the same across its restarts and different from any other
   * executor on the engine (the executor uses its host name and work directory). Its containers, and
   * those of dead executor processes on this host, are removed by removeLeftovers() and close().
   * Default: unique to this runner object.
   */
  readonly owner?: string;
  /**
   * This host's name in the labels, against which removeLeftovers() judges whether a pid is of this
   * host (default the machine's host name; tests give their own to keep their sweeps apart).
   */
  readonly hostName?: string;
  /**
   * Docker adds HOSTNAME, and HOME and PATH when unset, to every container. To give the command
   * exactly its environment the runner starts it through `env -i` from the image; set null for
   * images without /usr/bin/env (the command then also sees Docker's additions).
   */
  readonly envWrapper?: readonly string[] | null;
}

/**
 * Runs each Command in a fresh container: the build directory bind-mounted at its host path,
 * no network (NetworkMode none), a non-root user, memory (no swap), pids and CPU limits (the
 * policy's defaults, or what the action's limit properties ask within its ceilings), every
 * capability dropped. A timeout or abort kills the container; the container is removed in every
 * case, and containers labelled with its owner are removed by removeLeftovers() and close().
 */
export class DockerRunner implements Runner {
  readonly name = 'docker';
  readonly enforcesLimits = 'docker';
  private readonly docker: Docker;
  private readonly engine: string;
  private readonly uid: number;
  private readonly gid: number;
  private readonly limits: ResourceLimitPolicy;
  private readonly labels: Record<string, string>;
  /** Root in a container still owns root's files (no user namespace): only another uid is a stranger. */
  readonly actionUser: 'separate' | 'sandboxed';

  constructor(private readonly options: DockerRunnerOptions = {}) {
    this.engine = options.dockerHost ?? process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock';
    this.docker = new Docker(dockerConnection(this.engine));
    [this.uid, this.gid] = parseUser(options.user);
    this.actionUser = this.uid !== 0 && this.uid !== process.getuid?.() ? 'separate' : 'sandboxed';
    this.limits = options.limits ?? defaultResourceLimitPolicy(availableParallelism());
    this.labels = {
      [CONTAINER_LABEL]: 'docker',
      [OWNER_LABEL]: options.owner ?? `${options.hostName ?? hostname()}:${process.pid}:${randomUUID()}`,
      [OWNER_HOST_LABEL]: options.hostName ?? hostname(),
      [OWNER_PID_LABEL]: String(process.pid),
    };
  }

  /**
   * Removes what an earlier run of this executor left (it was killed before it could): containers
   * labelled with this owner, and containers of executor processes of this host that no longer
   * exist. Returns how many were removed.
   */
  async removeLeftovers(): Promise<number> {
    const containers = await this.docker.listContainers({
      all: true,
      filters: { label: [CONTAINER_LABEL, `${OWNER_HOST_LABEL}=${this.labels[OWNER_HOST_LABEL]}`] },
    });
    const stale = containers.filter((c) => c.Labels[OWNER_LABEL] === this.labels[OWNER_LABEL] || !processExists(Number(c.Labels[OWNER_PID_LABEL])));
    await Promise.all(stale.map((c) => removeContainer(this.docker.getContainer(c.Id))));
    return stale.length;
  }

  /** Kills and removes every container of this owner (runs still pending end as killed). */
  async close(): Promise<void> {
    const containers = await this.docker.listContainers({ all: true, filters: { label: [`${OWNER_LABEL}=${this.labels[OWNER_LABEL]}`] } });
    await Promise.all(containers.map((c) => removeContainer(this.docker.getContainer(c.Id))));
  }

  /** Fails with a message that says how to start an engine when none answers. */
  async ping(): Promise<void> {
    try {
      await this.docker.ping();
    } catch (e) {
      throw new UnavailableError(
        `no Docker engine answers at ${this.engine} (${(e as Error).message}); start one with scripts/docker/start-dockerd.sh and set DOCKER_HOST`,
      );
    }
  }

  async run(request: RunRequest): Promise<RunResult> {
    const image = containerImageOf(request.platform) ?? this.options.defaultImage ?? KILN_BASE_IMAGE;
    const cwd = resolveWorkingDirectory(request.buildDirectory, request.workingDirectory);
    const argv = this.commandLine(request);
    const limits = limitsForAction(this.limits, request.platform);
    await grantBuildDirectory(request.buildDirectory, this.uid, this.gid);

    const container = await this.create(image, argv, cwd, request, limits);
    const stdout = new OutputSinkStream(request.stdout);
    const stderr = new OutputSinkStream(request.stderr);
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const kill = (): void => {
      container.kill({ signal: 'SIGKILL' }).catch(() => {
        // Already stopped.
      });
    };
    try {
      const stream = await container.attach({ stream: true, stdout: true, stderr: true, hijack: true });
      const streamEnded = once(stream, 'end').catch(() => undefined);
      this.docker.modem.demuxStream(stream, stdout, stderr);
      const startedAtMs = Date.now();
      try {
        await container.start();
      } catch (e) {
        (stream as unknown as Duplex).destroy();
        return await cannotStart(e, argv[0] ?? '', stderr, stdout, startedAtMs);
      }
      if (request.timeoutMs > 0) {
        timer = setTimeout(() => {
          timedOut = true;
          kill();
        }, request.timeoutMs);
      }
      request.signal?.addEventListener('abort', kill, { once: true });
      if (request.signal?.aborted) kill();
      const { StatusCode } = (await container.wait()) as { StatusCode: number };
      const completedAtMs = Date.now();
      await streamEnded;
      // The container may be gone already: removed by close() or removeLeftovers() (the executor stops).
      const outOfMemory =
        StatusCode === 137 &&
        (await container.inspect().then(
          (c) => c.State.OOMKilled,
          () => false,
        ));
      await Promise.all([stdout.finish(), stderr.finish()]);
      return {
        exitCode: StatusCode,
        timedOut,
        outOfMemory,
        stdout: stdout.bytes(),
        stderr: stderr.bytes(),
        stdoutTruncated: stdout.truncated,
        stderrTruncated: stderr.truncated,
        stdoutSpilled: stdout.spilled,
        stderrSpilled: stderr.spilled,
        startedAtMs,
        completedAtMs,
      };
    } finally {
      if (timer) clearTimeout(timer);
      request.signal?.removeEventListener('abort', kill);
      await removeContainer(container);
      // On an error path the files are still open.
      await Promise.all([stdout.finish(), stderr.finish()]).catch(() => undefined);
    }
  }

  private commandLine(request: RunRequest): string[] {
    const wrapper = this.options.envWrapper === undefined ? ['/usr/bin/env', '-i'] : this.options.envWrapper;
    if (!wrapper) return [...request.arguments];
    // env takes NAME=VALUE words up to the first word without '=', which must be the program.
    if (request.arguments.length === 0) throw new InvalidArgumentError('Command.arguments is empty');
    if (request.arguments[0]!.includes('=')) {
      throw new InvalidArgumentError(`Command.arguments[0] '${request.arguments[0]}' contains '='; the Docker runner cannot start it`);
    }
    return [...wrapper, ...environmentList(request.environment), ...request.arguments];
  }

  private async create(image: string, argv: string[], cwd: string, request: RunRequest, limits: ResourceLimits): Promise<Docker.Container> {
    const [entrypoint, ...cmd] = argv;
    if (entrypoint === undefined) throw new InvalidArgumentError('Command.arguments is empty');
    try {
      return await this.docker.createContainer({
        Image: image,
        Entrypoint: [entrypoint],
        Cmd: cmd,
        Env: this.options.envWrapper === null ? environmentList(request.environment) : [],
        WorkingDir: cwd,
        User: `${this.uid}:${this.gid}`,
        Hostname: 'localhost',
        Labels: this.labels,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        NetworkDisabled: true,
        HostConfig: {
          NetworkMode: 'none',
          Mounts: [{ Type: 'bind', Source: request.buildDirectory, Target: request.buildDirectory, ReadOnly: false }],
          // 0: no limit (Docker's meaning too).
          Memory: limits.memoryBytes,
          // Equal to Memory: no swap on top of the limit.
          MemorySwap: limits.memoryBytes === 0 ? 0 : limits.memoryBytes,
          PidsLimit: limits.pids === 0 ? -1 : limits.pids,
          // Docker refuses more CPUs than the machine has.
          NanoCpus: Math.round(Math.min(limits.cpus || Infinity, availableParallelism()) * 1e9),
          CapDrop: ['ALL'],
          SecurityOpt: ['no-new-privileges'],
          AutoRemove: false,
        },
      });
    } catch (e) {
      const status = (e as { statusCode?: number }).statusCode;
      if (status === 404) {
        throw new FailedPreconditionError(
          `container image '${image}' is not in the Docker engine at ${this.engine}; no registry is reachable, so build or load it there first (Kiln's base image: deploy/base-image/build.sh)`,
        );
      }
      throw e;
    }
  }
}

function environmentList(environment: Readonly<Record<string, string>>): string[] {
  return Object.entries(environment).map(([name, value]) => `${name}=${value}`);
}

/** How dockerode reaches the engine at `unix:///path` or `tcp://127.0.0.1:PORT` (InvalidArgumentError otherwise). */
export function dockerConnection(engine: string): Docker.DockerOptions {
  if (engine.startsWith('unix://')) return { socketPath: engine.slice('unix://'.length) };
  const url = new URL(engine);
  if (url.protocol === 'tcp:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
    return { host: url.hostname, port: Number(url.port), protocol: 'http' };
  }
  throw new InvalidArgumentError(`Docker engine address '${engine}' must be unix:///path or tcp://127.0.0.1:PORT`);
}

function parseUser(user: string | undefined): [number, number] {
  if (user === undefined) {
    const uid = process.getuid?.() ?? 1000;
    return uid === 0 ? [1000, 1000] : [uid, process.getgid?.() ?? uid];
  }
  const match = /^(\d+):(\d+)$/.exec(user);
  if (!match) throw new InvalidArgumentError(`Docker runner user '${user}' must be numeric uid:gid`);
  return [Number(match[1]), Number(match[2])];
}

/** A program that does not exist: exit 127 with the engine's reason on stderr, as a shell does. */
async function cannotStart(error: unknown, program: string, stderr: OutputSinkStream, stdout: OutputSinkStream, startedAtMs: number): Promise<RunResult> {
  const message = (error as Error).message ?? String(error);
  if (!/executable file not found|no such file or directory/i.test(message)) throw error;
  stderr.write(Buffer.from(`kiln: cannot run '${program}': ${message}\n`));
  await Promise.all([stdout.finish(), stderr.finish()]);
  return {
    exitCode: 127,
    timedOut: false,
    outOfMemory: false,
    stdout: stdout.bytes(),
    stderr: stderr.bytes(),
    stdoutTruncated: false,
    stderrTruncated: false,
    stdoutSpilled: stdout.spilled,
    stderrSpilled: stderr.spilled,
    startedAtMs,
    completedAtMs: Date.now(),
  };
}

async function removeContainer(container: Docker.Container): Promise<void> {
  try {
    await container.remove({ force: true, v: true });
  } catch (e) {
    const status = (e as { statusCode?: number }).statusCode;
    // 404: already gone; 409: removal already in progress.
    if (status !== 404 && status !== 409) throw e;
  }
}
