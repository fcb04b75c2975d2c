import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { lstatSync, renameSync, rmSync } from 'node:fs';
import { availableParallelism, hostname } from 'node:os';
import { dirname, join } from 'node:path';
import type { Duplex } from 'node:stream';
import Docker from 'dockerode';
import { FailedPreconditionError, InvalidArgumentError, UnavailableError } from '../../src/core/index.js';
import { containerImageOf } from './container-image.js';
import { containerOomFile, containerOomKills, containerProcesses, containerProcessesFile } from './container-state.js';
import { grantBuildDirectory } from './grant-build-directory.js';
import { OutputSinkStream } from './output-sink-stream.js';
import { processExists } from './process-exists.js';
import { defaultResourceLimitPolicy, limitsForAction, type ResourceLimitPolicy, type ResourceLimits } from './resource-limits.js';
import type { RunRequest, RunResult, Runner } from './runner.js';
import { makeMountDirectory, type WarmContainer, WarmContainerPool } from './warm-container-pool.js';
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
  /**
   * Warm containers (the default): actions run by `docker exec` in started containers kept per image,
   * user and limits, so an action pays no create, start or remove. `false`: a fresh container per
   * action, for images without `sleep infinity` (the warm containers' init).
   */
  readonly warm?: false | { readonly maxIdle?: number; readonly maxActionsPerContainer?: number };
}

/** A warm container is recycled after this many actions even when it looks unchanged. */
const DEFAULT_ACTIONS_PER_CONTAINER = 100;

/**
 * Where a warm container sees its mount directory, and the build directory in it during a run: one
 * path for every action (outputs that record their path are the same wherever they ran), and a
 * container-side path, so the host's layout (a work directory under /tmp) does not show in its /tmp.
 */
export const CONTAINER_MOUNT = '/kiln';
const BUILD_DIRECTORY_IN_MOUNT = 'root';
const CONTAINER_BUILD_DIRECTORY = `${CONTAINER_MOUNT}/${BUILD_DIRECTORY_IN_MOUNT}`;

/** Per-action knobs on top of what every container gets. */
interface ContainerSpec {
  readonly image: string;
  readonly limits: ResourceLimits;
}

/**
 * Runs each Command in a container with no network (NetworkMode none), a non-root user, memory (no
 * swap), pids and CPU limits (the policy's defaults, or what the action's limit properties ask within
 * its ceilings), every capability dropped. Warm (the default): by `docker exec` in a started
 * container of the pool (read-only root file system, a tmpfs /tmp, SysV IPC disabled), into whose
 * mount directory the build directory is moved for the run; the container is recycled unless the host
 * sees it unchanged afterwards. Fresh: a container per action with the build directory bind-mounted at
 * its host path. A timeout or abort kills the container; containers labelled with its owner are
 * removed by removeLeftovers() and close().
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
  private readonly pool: WarmContainerPool | undefined;

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
    this.pool =
      options.warm === false
        ? undefined
        : new WarmContainerPool({
            maxIdle: options.warm?.maxIdle ?? availableParallelism(),
            maxActionsPerContainer: options.warm?.maxActionsPerContainer ?? DEFAULT_ACTIONS_PER_CONTAINER,
            remove: removeContainer,
          });
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
    await this.pool?.close();
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
    const spec: ContainerSpec = {
      image: containerImageOf(request.platform) ?? this.options.defaultImage ?? KILN_BASE_IMAGE,
      limits: limitsForAction(this.limits, request.platform),
    };
    // Refused before anything is made.
    resolveWorkingDirectory(request.buildDirectory, request.workingDirectory);
    const argv = this.commandLine(request);
    await grantBuildDirectory(request.buildDirectory, this.uid, this.gid);
    return this.pool ? this.runWarm(this.pool, spec, argv, request) : this.runFresh(spec, argv, request);
  }

  /**
   * One action in a warm container: the build directory is renamed into the container's mount
   * directory (same file system: one rename each way), the command started by exec, and the
   * container given back only if nothing of the action is left in it.
   */
  private async runWarm(pool: WarmContainerPool, spec: ContainerSpec, argv: string[], request: RunRequest): Promise<RunResult> {
    const key = JSON.stringify([spec.image, spec.limits, dirname(request.buildDirectory)]);
    let warm = pool.take(key);
    let exec: Docker.Exec;
    try {
      warm ??= await this.startWarm(key, spec, dirname(request.buildDirectory));
      exec = await this.createExec(warm, argv, request, spec.image);
    } catch (e) {
      if (!warm) throw e;
      pool.discard(warm);
      if (warm.actions === 0) throw e;
      // A pooled container that died meanwhile (removed from outside, its init killed): a new one.
      warm = await this.startWarm(key, spec, dirname(request.buildDirectory));
      exec = await this.createExec(warm, argv, request, spec.image).catch((again: unknown) => {
        pool.discard(warm!);
        throw again;
      });
    }
    const inside = join(warm.mountDirectory, BUILD_DIRECTORY_IN_MOUNT);
    let moved: number;
    try {
      moved = lstatSync(request.buildDirectory).ino;
      renameSync(request.buildDirectory, inside);
    } catch (e) {
      pool.giveBack(warm, true);
      throw e;
    }
    const before = pool.snapshot(warm);
    const oomKillsBefore = warm.oomFile === undefined ? undefined : containerOomKills(warm.oomFile);
    const stdout = new OutputSinkStream(request.stdout);
    const stderr = new OutputSinkStream(request.stderr);
    let killed = false;
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const stopped = (): Promise<unknown> => warm.container.wait({ condition: 'not-running' }).catch(() => undefined);
    let killing: Promise<unknown> | undefined;
    const kill = (): void => {
      killed = true;
      killing ??= warm.container
        .kill({ signal: 'SIGKILL' })
        .catch(() => undefined)
        .then(stopped);
    };
    try {
      const startedAtMs = Date.now();
      let stream: Duplex;
      try {
        stream = (await exec.start({ hijack: true, stdin: false })) as Duplex;
      } catch (e) {
        return await cannotStart(e, argv[0] ?? '', stderr, stdout, startedAtMs);
      }
      const streamEnded = once(stream, 'end').catch(() => undefined);
      // An engine that drops the connection (the container removed) ends the stream with 'close' only.
      const streamClosed = once(stream, 'close').catch(() => undefined);
      this.docker.modem.demuxStream(stream, stdout, stderr);
      if (request.timeoutMs > 0) {
        timer = setTimeout(() => {
          timedOut = true;
          kill();
        }, request.timeoutMs);
      }
      request.signal?.addEventListener('abort', kill, { once: true });
      if (request.signal?.aborted) kill();
      await Promise.race([streamEnded, streamClosed]);
      const completedAtMs = Date.now();
      // A container killed or removed meanwhile (the executor stops) took the action with it.
      const exitCode =
        killed || !containerProcesses(warm.processesFile)?.includes(warm.initPid)
          ? 137
          : await exec.inspect().then(
              (i) => i.ExitCode ?? 137,
              () => 137,
            );
      // Docker's OOMKilled is about the init only: the kernel's count of the container's cgroup says it.
      const oomKills = warm.oomFile === undefined ? undefined : containerOomKills(warm.oomFile);
      const outOfMemory = exitCode === 137 && oomKills !== undefined && oomKills !== oomKillsBefore;
      // Any process of the action may have been the one killed: the container is in doubt.
      if (oomKills === undefined || oomKills !== oomKillsBefore) kill();
      return await capturedResult({ exitCode, timedOut, outOfMemory, startedAtMs, completedAtMs }, stdout, stderr);
    } finally {
      if (timer) clearTimeout(timer);
      request.signal?.removeEventListener('abort', kill);
      // Checked before the build directory moves out (the move changes the mount directory).
      const reusable = !killed && pool.unchanged(warm, before);
      // No process of the action may outlive the run: a container in doubt is killed first.
      if (!reusable) kill();
      await killing;
      await Promise.all([stdout.finish(), stderr.finish()]).catch(() => undefined);
      // Out before the container can take another action's build directory.
      let back = false;
      try {
        moveBack(inside, moved, request.buildDirectory);
        back = true;
      } finally {
        pool.giveBack(warm, reusable && back);
      }
    }
  }

  /** Starts a container for the pool: init `sleep infinity`, the mount directory bound at its own path. */
  private async startWarm(key: string, spec: ContainerSpec, besideBuildDirectories: string): Promise<WarmContainer> {
    const mountDirectory = join(besideBuildDirectories, `.kiln-warm-${randomUUID()}`);
    makeMountDirectory(mountDirectory);
    let container: Docker.Container | undefined;
    try {
      container = await this.createContainer(spec, {
        Entrypoint: ['sleep'],
        Cmd: ['infinity'],
        WorkingDir: '/',
        Env: [],
        mount: { source: mountDirectory, target: CONTAINER_MOUNT },
        warm: true,
      });
      await container.start();
      const { State } = await container.inspect();
      const processesFile = State.Running ? containerProcessesFile(State.Pid) : undefined;
      if (!processesFile) {
        throw new FailedPreconditionError(
          `a warm container of image '${spec.image}' did not stay up (its init is 'sleep infinity', which the image must have; exit ${State.ExitCode}); use an image with GNU or busybox sleep, or the fresh-container mode`,
        );
      }
      return { key, container, initPid: State.Pid, processesFile, oomFile: containerOomFile(State.Pid), mountDirectory, actions: 0 };
    } catch (e) {
      if (container) await removeContainer(container).catch(() => undefined);
      rmSync(mountDirectory, { recursive: true, force: true });
      throw e;
    }
  }

  /** The action's exec in `warm`, its working directory where the build directory will be during the run. */
  private async createExec(warm: WarmContainer, argv: string[], request: RunRequest, image: string): Promise<Docker.Exec> {
    try {
      return await warm.container.exec({
        Cmd: argv,
        Env: this.options.envWrapper === null ? environmentList(request.environment) : [],
        WorkingDir: resolveWorkingDirectory(CONTAINER_BUILD_DIRECTORY, request.workingDirectory),
        User: `${this.uid}:${this.gid}`,
        AttachStdout: true,
        AttachStderr: true,
        AttachStdin: false,
        Tty: false,
      });
    } catch (e) {
      throw new UnavailableError(`the warm container of image '${image}' cannot run the action: ${(e as Error).message}`);
    }
  }

  /** One action in a container of its own, created, started and removed around it. */
  private async runFresh(spec: ContainerSpec, argv: string[], request: RunRequest): Promise<RunResult> {
    const [entrypoint, ...cmd] = argv;
    if (entrypoint === undefined) throw new InvalidArgumentError('Command.arguments is empty');
    const container = await this.createContainer(spec, {
      Entrypoint: [entrypoint],
      Cmd: cmd,
      WorkingDir: resolveWorkingDirectory(request.buildDirectory, request.workingDirectory),
      Env: this.options.envWrapper === null ? environmentList(request.environment) : [],
      mount: { source: request.buildDirectory, target: request.buildDirectory },
      warm: false,
    });
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
      return await capturedResult({ exitCode: StatusCode, timedOut, outOfMemory, startedAtMs, completedAtMs }, stdout, stderr);
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

  private async createContainer(
    spec: ContainerSpec,
    run: { Entrypoint: string[]; Cmd: string[]; WorkingDir: string; Env: string[]; mount: { source: string; target: string }; warm: boolean },
  ): Promise<Docker.Container> {
    const { limits, image } = spec;
    try {
      return await this.docker.createContainer({
        Image: image,
        Entrypoint: run.Entrypoint,
        Cmd: run.Cmd,
        Env: run.Env,
        WorkingDir: run.WorkingDir,
        User: `${this.uid}:${this.gid}`,
        Hostname: 'localhost',
        Labels: this.labels,
        AttachStdout: !run.warm,
        AttachStderr: !run.warm,
        Tty: false,
        NetworkDisabled: true,
        HostConfig: {
          NetworkMode: 'none',
          Mounts: [{ Type: 'bind', Source: run.mount.source, Target: run.mount.target, ReadOnly: false }],
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
          // A container that outlives its action keeps nothing it wrote: the root file system cannot
          // be written, /tmp is a tmpfs the host watches, and SysV IPC objects (which the host cannot
          // see) cannot be made at all.
          ...(run.warm
            ? {
                ReadonlyRootfs: true,
                Tmpfs: { '/tmp': 'rw,nosuid,nodev,mode=1777' },
                Sysctls: { 'kernel.shmmni': '0', 'kernel.msgmni': '0', 'kernel.sem': '0 0 0 0' },
              }
            : {}),
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

/**
 * The build directory back at its host path once the action is over. The action could not rename it
 * (the mount directory is the executor's, not writable by the container user); the inode check
 * covers an executor whose container user is itself.
 */
function moveBack(inside: string, moved: number, buildDirectory: string): void {
  const now = lstatSync(inside, { throwIfNoEntry: false });
  if (!now?.isDirectory() || now.ino !== moved) {
    throw new FailedPreconditionError('the action replaced its build directory; its outputs cannot be collected');
  }
  renameSync(inside, buildDirectory);
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
  return capturedResult({ exitCode: 127, timedOut: false, outOfMemory: false, startedAtMs, completedAtMs: Date.now() }, stdout, stderr);
}

/** A run's result once both output streams are finished: how it ended, and what it wrote. */
async function capturedResult(
  end: Pick<RunResult, 'exitCode' | 'timedOut' | 'outOfMemory' | 'startedAtMs' | 'completedAtMs'>,
  stdout: OutputSinkStream,
  stderr: OutputSinkStream,
): Promise<RunResult> {
  await Promise.all([stdout.finish(), stderr.finish()]);
  return {
    ...end,
    stdout: stdout.bytes(),
    stderr: stderr.bytes(),
    stdoutTruncated: stdout.truncated,
    stderrTruncated: stderr.truncated,
    stdoutSpilled: stdout.spilled,
    stderrSpilled: stderr.spilled,
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
