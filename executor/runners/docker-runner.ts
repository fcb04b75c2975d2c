import { once } from 'node:events';
import type { Duplex } from 'node:stream';
import Docker from 'dockerode';
import { FailedPreconditionError, InvalidArgumentError, UnavailableError } from '../../src/core/index.js';
import { grantBuildDirectory } from './grant-build-directory.js';
import { OutputSinkStream } from './output-sink-stream.js';
import type { PlatformProperty, RunRequest, RunResult, Runner } from './runner.js';
import { resolveWorkingDirectory } from './working-directory.js';

/** Kiln's base image, built by deploy/base-image/build.sh. */
export const KILN_BASE_IMAGE = 'kiln/base:latest';

/** Labels every container the runner creates, so leftovers can be found (there should be none). */
export const CONTAINER_LABEL = 'kiln.runner';

export interface DockerRunnerOptions {
  /** Engine address `unix:///path` or `tcp://127.0.0.1:PORT`; default $DOCKER_HOST, then /var/run/docker.sock. */
  readonly dockerHost?: string;
  /** Image when the action has no `container-image` platform property. */
  readonly defaultImage?: string;
  /** The container user `uid:gid`; default the executor's own ids, or 1000:1000 (`kiln`) when it runs as root. */
  readonly user?: string;
  readonly memoryBytes?: number;
  readonly pidsLimit?: number;
  /** CPUs the container may use (fractions allowed). */
  readonly cpus?: number;
  /**
   * Docker adds HOSTNAME, and HOME and PATH when unset, to every container. To give the command
   * exactly its environment the runner starts it through `env -i` from the image; set null for
   * images without /usr/bin/env (the command then also sees Docker's additions).
   */
  readonly envWrapper?: readonly string[] | null;
}

/**
 * Runs each Command in a fresh container: the build directory bind-mounted at its host path,
 * no network (NetworkMode none), a non-root user, memory, pids and CPU limits, every capability
 * dropped. A timeout or abort kills the container; the container is removed in every case.
 */
export class DockerRunner implements Runner {
  readonly name = 'docker';
  private readonly docker: Docker;
  private readonly engine: string;
  private readonly uid: number;
  private readonly gid: number;
  /** Root in a container still owns root's files (no user namespace): only another uid is a stranger. */
  readonly actionUser: 'separate' | 'sandboxed';

  constructor(private readonly options: DockerRunnerOptions = {}) {
    this.engine = options.dockerHost ?? process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock';
    this.docker = new Docker(dockerConnection(this.engine));
    [this.uid, this.gid] = parseUser(options.user);
    this.actionUser = this.uid !== 0 && this.uid !== process.getuid?.() ? 'separate' : 'sandboxed';
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
    await grantBuildDirectory(request.buildDirectory, this.uid, this.gid);

    const container = await this.create(image, argv, cwd, request);
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
      const outOfMemory = StatusCode === 137 && (await container.inspect()).State.OOMKilled;
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

  private async create(image: string, argv: string[], cwd: string, request: RunRequest): Promise<Docker.Container> {
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
        Labels: { [CONTAINER_LABEL]: 'docker' },
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        NetworkDisabled: true,
        HostConfig: {
          NetworkMode: 'none',
          Mounts: [{ Type: 'bind', Source: request.buildDirectory, Target: request.buildDirectory, ReadOnly: false }],
          Memory: this.options.memoryBytes,
          // Equal to Memory: no swap on top of the limit.
          MemorySwap: this.options.memoryBytes,
          PidsLimit: this.options.pidsLimit,
          NanoCpus: this.options.cpus ? Math.round(this.options.cpus * 1e9) : undefined,
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

/** The `container-image` platform property, without Bazel's `docker://` prefix. */
export function containerImageOf(platform: readonly PlatformProperty[]): string | undefined {
  const value = platform.find((p) => p.name === 'container-image')?.value;
  if (!value) return undefined;
  return value.startsWith('docker://') ? value.slice('docker://'.length) : value;
}

function environmentList(environment: Readonly<Record<string, string>>): string[] {
  return Object.entries(environment).map(([name, value]) => `${name}=${value}`);
}

function dockerConnection(engine: string): Docker.DockerOptions {
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
async function cannotStart(
  error: unknown,
  program: string,
  stderr: OutputSinkStream,
  stdout: OutputSinkStream,
  startedAtMs: number,
): Promise<RunResult> {
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
