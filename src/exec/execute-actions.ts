import { unlinkSync } from 'node:fs';
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { isKilnError, type Digest, type ProcessResult, type SandboxSupport } from '../core/index.js';
import { computeActionKey, localActionKey, type Action, type InputFile } from '../actions/index.js';
import { actionEnvironment } from './action-environment.js';
import { ActionSpawners, type SandboxAvailability } from './action-spawners.js';
import { buildActionGraph } from './action-graph.js';
import { scriptedCommand } from './command-script.js';
import { DiskCache, type CachedOutput } from './disk-cache.js';
import { formatCommand, PROCESS_KIND_ORDER, type ActionFailure, type ExecutionReporter, type ExecutionSummary, type ProcessKind } from './execution-reporter.js';
import { FileDigestCache } from './file-digest-cache.js';
import { inProcessContent } from './in-process-work.js';
import { LocalActionCache } from './local-action-cache.js';
import { LocalStrategy } from './local-strategy.js';
import { ProcessSlots } from './process-slots.js';
import { SandboxedStrategy } from './sandboxed-strategy.js';
import { ScratchDirectories } from './scratch-directories.js';
import type { SpawnStrategy } from './spawn-strategy.js';
import { chooseStrategy, sandboxRequested, type StrategyFlags } from './strategy-selection.js';

/** Thrown through a strategy when the build stopped before the action's process could start. */
const SKIPPED = Symbol('skipped');

/** Actions hashing inputs and checking caches at once, besides those running processes. */
const ACTIONS_IN_FLIGHT = 32;

export interface ExecutionOptions {
  /** Where actions run: exec paths are relative to it. Source files must already be reachable in it. */
  readonly execRoot: string;
  /** Holds the persistent caches (`cache/`) and per-action scratch directories (`sandbox/`). */
  readonly outputBase: string;
  /** The client's environment: PATH is taken from it, nothing else. */
  readonly clientEnv: Readonly<Record<string, string | undefined>>;
  /** `--jobs`: processes at once; the number of cores by default. */
  readonly jobs?: number;
  /** `--keep_going`: after a failure, go on with every action that does not depend on it. */
  readonly keepGoing?: boolean;
  /** `--disk_cache=DIR`. */
  readonly diskCache?: string;
  readonly strategies?: StrategyFlags;
  /** Whether bubblewrap can sandbox here (the fallback of the native sandbox); detected lazily when absent. */
  readonly sandbox?: SandboxSupport;
  /** false: sandbox with bubblewrap even where the native sandbox runs (tests of that fallback). */
  readonly nativeSandbox?: boolean;
  /**
   * The helper processes actions start from, when the caller started them early (and closes them);
   * otherwise the build starts its own on first use and closes them at the end.
   */
  readonly spawners?: ActionSpawners;
  /** Aborting (Ctrl-C) kills running processes and starts no more; the build then fails. */
  readonly signal?: AbortSignal;
}

/** Files of the output base that belong to execution. */
export function executionPaths(outputBase: string) {
  return {
    fileDigestCache: join(outputBase, 'cache', 'file-digests.json'),
    actionCache: join(outputBase, 'cache', 'action-cache.bin'),
    scratch: join(outputBase, 'sandbox'),
  };
}

/**
 * Runs `actions` (the actions the requested targets need, with every action that produces one of
 * their derived inputs) in dependency order, at most `jobs` at a time, skipping those whose result
 * is cached, and reports progress to `reporter`. Resolves with the summary; a failed action makes
 * `success` false, it does not throw.
 * @throws KilnError when the action graph itself is invalid (conflicting outputs, cycles, dangling
 *   derived inputs) or a strategy flag cannot be honoured.
 */
export async function executeActions(actions: readonly Action[], options: ExecutionOptions, reporter: ExecutionReporter): Promise<ExecutionSummary> {
  const graph = buildActionGraph(actions);
  const paths = executionPaths(options.outputBase);
  await rm(paths.scratch, { recursive: true, force: true });
  await mkdir(paths.scratch, { recursive: true });
  const [digestCache, actionCache] = await Promise.all([FileDigestCache.load(paths.fileDigestCache), LocalActionCache.load(paths.actionCache)]);
  // Opening a disk cache scans it; a build the local action cache fully answers never does.
  const dir = options.diskCache;
  let opened: Promise<DiskCache> | undefined;
  const diskCache = dir ? () => (opened ??= DiskCache.open(dir)) : undefined;
  const jobs = Math.max(1, options.jobs ?? availableParallelism());
  const spawners = options.spawners ?? new ActionSpawners(options.clientEnv, options.sandbox, { nativeSandbox: options.nativeSandbox });
  const scratch = new ScratchDirectories(paths.scratch, (message) => reporter.warning(message));
  const run = new ActionRunner(options, reporter, digestCache, actionCache, diskCache, scratch, new ProcessSlots(jobs), spawners);

  reporter.buildStarted(actions.length);
  // Actions in flight (hashing inputs, checking caches, waiting for a process slot); only the
  // processes themselves are bounded by --jobs.
  const inFlight = Math.max(jobs, ACTIONS_IN_FLIGHT);
  const waitingOn = new Map<Action, number>(actions.map((a) => [a, graph.dependencies.get(a)!.length]));
  const ready = actions.filter((a) => waitingOn.get(a) === 0);
  let nextReady = 0;
  let running = 0;
  let finished = 0;
  const allDone = new Promise<void>((resolve) => {
    const pump = () => {
      const stopped = run.stopping();
      while (!stopped && running < inFlight && nextReady < ready.length) start(ready[nextReady++]!);
      if (running === 0 && (stopped || nextReady === ready.length)) resolve();
    };
    const start = (action: Action) => {
      running++;
      void run.execute(action).then((outcome) => {
        running--;
        if (outcome !== 'skipped') finished++;
        if (outcome === 'done') {
          for (const dependent of graph.dependents.get(action)!) {
            const left = waitingOn.get(dependent)! - 1;
            waitingOn.set(dependent, left);
            if (left === 0) ready.push(dependent);
          }
        }
        pump();
      });
    };
    pump();
  });
  try {
    await allDone;
  } finally {
    await scratch.settled();
    if (!options.spawners) await spawners.close();
  }

  await Promise.all([digestCache.save(), actionCache.save()]);
  await rm(paths.scratch, { recursive: true, force: true });
  const summary: ExecutionSummary = {
    success: run.failures.length === 0 && finished === actions.length,
    totalActions: finished,
    processes: { ...run.processes },
    failures: run.failures,
  };
  reporter.buildFinished(summary);
  return summary;
}

/** Runs one action at a time through the caches and a strategy; shared state of one build. */
class ActionRunner {
  readonly failures: ActionFailure[] = [];
  readonly processes: Record<ProcessKind, number> = Object.fromEntries(PROCESS_KIND_ORDER.map((k) => [k, 0])) as Record<ProcessKind, number>;
  /** Digests of outputs produced or verified in this build, so dependents need not stat them. */
  private readonly outputDigests = new Map<string, InputFile>();
  private readonly local: LocalStrategy;
  private sandboxed: Promise<{ support: SandboxAvailability; strategy?: SpawnStrategy }> | undefined;
  private warnedSandbox = false;
  /** A process exited unsuccessfully; its failure may not be recorded yet. */
  private processFailed = false;

  constructor(
    private readonly options: ExecutionOptions,
    private readonly reporter: ExecutionReporter,
    private readonly digestCache: FileDigestCache,
    private readonly actionCache: LocalActionCache,
    private readonly openDiskCache: (() => Promise<DiskCache>) | undefined,
    private readonly scratch: ScratchDirectories,
    private readonly slots: ProcessSlots,
    private readonly spawners: ActionSpawners,
  ) {
    this.local = new LocalStrategy(spawners.local);
  }

  /** True once the build stops (a failure without --keep_going, or Ctrl-C): start nothing more. */
  stopping(): boolean {
    const failed = this.failures.length > 0 || this.processFailed;
    return (failed && !this.options.keepGoing) || (this.options.signal?.aborted ?? false);
  }

  /**
   * `done`: the outputs are in place. `failed`: recorded and reported (never thrown). `skipped`: the
   * build stopped before the action's process could start.
   */
  async execute(action: Action): Promise<'done' | 'failed' | 'skipped'> {
    try {
      const outcome = await this.executeOrFail(action);
      return outcome === 'skipped' ? outcome : outcome ? 'done' : 'failed';
    } catch (e) {
      const message = isKilnError(e) ? e.message : `${action.progressMessage} failed: ${e instanceof Error ? e.message : String(e)}`;
      this.fail({ action, message });
      return 'failed';
    }
  }

  private async executeOrFail(action: Action): Promise<boolean | 'skipped'> {
    const execRoot = this.options.execRoot;
    const inputs = await this.digestInputs(action);
    if (typeof inputs === 'string') return this.fail({ action, message: inputs });
    const env = actionEnvironment(action, this.options.clientEnv);
    const localKey = localActionKey(action, env, inputs);
    const requirements = new Set<string>(action.executionRequirements);
    const cacheable = !requirements.has('no-cache');
    const useDiskCache = cacheable && !requirements.has('no-remote-cache') && !requirements.has('no-remote') && !requirements.has('local');

    if (cacheable && (await this.upToDate(action, localKey))) {
      this.reporter.actionFinished(action, undefined);
      return true;
    }
    if (action.inProcess) return this.runInProcess(action, localKey, cacheable);
    const diskCache = useDiskCache && this.openDiskCache ? await this.openDiskCache() : undefined;
    // The REAPI key addresses the shared caches; a build without one never needs it.
    const shared = diskCache ? { cache: diskCache, digest: computeActionKey(action, { env, inputs }).digest } : undefined;
    if (shared) {
      const cached = await shared.cache.lookup(shared.digest);
      if (cached && this.declaresExactly(action, cached) && (await shared.cache.restore(cached, execRoot))) {
        await this.recordOutputs(cached);
        for (const o of cached) await this.digestCache.remember(join(execRoot, o.path), o.digest);
        if (cacheable) this.actionCache.put(localKey, cached);
        this.count('disk cache hit');
        this.reporter.actionFinished(action, 'disk cache hit');
        return true;
      }
    }

    const strategy = await this.strategyFor(action);
    if (!strategy) return false;
    if (this.stopping()) return 'skipped';
    return this.spawn(action, strategy, env, localKey, cacheable, shared);
  }

  /**
   * Runs the action's process, checks and records its outputs. Only the process itself holds one of
   * the --jobs slots: preparing its directories and hashing its outputs overlap with other processes.
   */
  private async spawn(
    action: Action,
    strategy: SpawnStrategy,
    env: Record<string, string>,
    localKey: string,
    cacheable: boolean,
    shared: { readonly cache: DiskCache; readonly digest: Digest } | undefined,
  ): Promise<boolean | 'skipped'> {
    const execRoot = this.options.execRoot;
    await this.deleteOutputs(action);
    const scratchDir = this.scratch.acquire();
    const signal = this.options.signal;
    try {
      let argv = [...action.argv];
      let scripted;
      const commandScript = join(scratchDir, 'command.sh');
      try {
        scripted = scriptedCommand(argv, commandScript);
      } catch (e) {
        return this.fail({ action, message: `${action.progressMessage} failed: ${(e as Error).message}` });
      }
      if (scripted) {
        await writeFile(commandScript, scripted.script);
        argv = scripted.argv;
      }
      const command = formatCommand(execRoot, env, action.argv);
      const withSlot = async (start: () => Promise<ProcessResult>): Promise<ProcessResult> => {
        const release = await this.slots.acquire();
        try {
          if (this.stopping()) throw SKIPPED;
          this.reporter.actionStarted(action, strategy.runnerName, command);
          const result = await start();
          // Said before the slot passes on, so without --keep_going no further process starts.
          if (result.exitCode !== 0 && !action.exitCodeIsResult) this.processFailed = true;
          return result;
        } finally {
          release();
        }
      };
      let result;
      try {
        result = await strategy.exec({ action, argv, env, execRoot, scratchDir, signal, withSlot, ...(scripted ? { commandScript } : {}) });
      } catch (e) {
        if (e === SKIPPED) return 'skipped';
        throw e;
      }
      if (signal?.aborted) {
        await this.deleteOutputs(action);
        return this.fail({ action, message: `${action.progressMessage} interrupted` });
      }
      // A test's non-zero exit is its result: outputs kept, nothing cached (see Action.exitCodeIsResult).
      const resultIsFailure = result.exitCode !== 0;
      if (resultIsFailure && !action.exitCodeIsResult) {
        await this.deleteOutputs(action);
        return this.fail({ action, message: `${action.progressMessage} failed (${exitDescription(result)})`, command, stdout: result.stdout, stderr: result.stderr });
      }
      // One stat per output, the digest cache's: what it cannot read as a file is missing.
      const missing: string[] = [];
      const outputs: CachedOutput[] = [];
      for (const output of action.outputs) {
        const path = join(execRoot, output.execPath);
        const file = await this.digestOutput(path, action.executableOutputs);
        if (file) outputs.push({ path: output.execPath, digest: file.digest, isExecutable: file.isExecutable });
        else missing.push(output.execPath);
      }
      if (missing.length > 0) {
        await this.deleteOutputs(action);
        const list = missing.map((m) => `'${m}'`).join(', ');
        return this.fail({
          action,
          message: `${action.progressMessage} failed: declared output${missing.length > 1 ? 's' : ''} ${list} ${missing.length > 1 ? 'were' : 'was'} not created`,
          command,
          stdout: result.stdout,
          stderr: result.stderr,
        });
      }
      await this.recordOutputs(outputs);
      if (cacheable && !resultIsFailure) this.actionCache.put(localKey, outputs);
      if (shared && !resultIsFailure) {
        await shared.cache.store(shared.digest, outputs, execRoot).catch((e: Error) => this.reporter.warning(`writing to the disk cache failed: ${e.message}`));
      }
      this.count(strategy.runnerName);
      this.reporter.actionFinished(action, strategy.runnerName);
      return true;
    } finally {
      this.scratch.release(scratchDir);
    }
  }

  /** Writes an in-process action's one output here (no process, no slot), then records it like any output. */
  private async runInProcess(action: Action, localKey: string, cacheable: boolean): Promise<boolean> {
    await this.deleteOutputs(action);
    const output = action.outputs[0]!;
    const path = join(this.options.execRoot, output.execPath);
    try {
      const content = await inProcessContent(action.inProcess!, this.options.execRoot);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, content);
    } catch (e) {
      await this.deleteOutputs(action);
      return this.fail({ action, message: `${action.progressMessage} failed: ${(e as Error).message}` });
    }
    const file = await this.digestOutput(path, action.executableOutputs);
    if (!file) return this.fail({ action, message: `${action.progressMessage} failed: declared output '${output.execPath}' was not created` });
    const outputs: CachedOutput[] = [{ path: output.execPath, digest: file.digest, isExecutable: file.isExecutable }];
    await this.recordOutputs(outputs);
    if (cacheable) this.actionCache.put(localKey, outputs);
    this.count('internal');
    this.reporter.actionFinished(action, 'internal');
    return true;
  }

  /** The digests of an action's inputs (hashed concurrently), or the message of the first problem. */
  private async digestInputs(action: Action): Promise<InputFile[] | string> {
    const results = await Promise.all(
      action.inputs.map(async (input): Promise<InputFile | string> => {
        const known = this.outputDigests.get(input.execPath);
        if (known) return known;
        try {
          const file = await this.digestCache.digest(join(this.options.execRoot, input.execPath));
          if (file.isDirectory) return `${action.owner}: input '${input.execPath}' is a directory; only files can be inputs`;
          return { path: input.execPath, digest: file.digest, isExecutable: file.isExecutable };
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOENT') return `${action.owner}: missing input file '${input.execPath}'`;
          throw e;
        }
      }),
    );
    const problem = results.find((r): r is string => typeof r === 'string');
    return problem ?? (results as InputFile[]);
  }

  /** A local action cache hit whose outputs are all still on disk with the recorded digests. */
  private async upToDate(action: Action, key: string): Promise<boolean> {
    const recorded = this.actionCache.get(key);
    if (!recorded) return false;
    const outputs: CachedOutput[] = [];
    for (const file of recorded) {
      try {
        const now = await this.digestCache.digest(join(this.options.execRoot, file.path));
        if (now.isDirectory || now.digest.hash !== file.digest.hash || now.isExecutable !== file.isExecutable) return false;
        outputs.push({ path: file.path, digest: now.digest, isExecutable: now.isExecutable });
      } catch {
        return false;
      }
    }
    if (!this.declaresExactly(action, outputs)) return false;
    await this.recordOutputs(outputs);
    return true;
  }

  private declaresExactly(action: Action, outputs: readonly CachedOutput[]): boolean {
    const declared = new Set(action.outputs.map((o) => o.execPath));
    return outputs.length === declared.size && outputs.every((o) => declared.has(o.path));
  }

  /** An output's digest (made executable first when asked), or undefined when it is not a readable file. */
  private async digestOutput(path: string, executable: boolean): Promise<{ digest: Digest; isExecutable: boolean } | undefined> {
    try {
      if (executable) await chmod(path, 0o755);
      const file = await this.digestCache.digest(path, { settled: true });
      return file.isDirectory ? undefined : file;
    } catch {
      return undefined;
    }
  }

  private async recordOutputs(outputs: readonly CachedOutput[]): Promise<void> {
    for (const o of outputs) this.outputDigests.set(o.path, { path: o.path, digest: o.digest, isExecutable: o.isExecutable });
  }

  private async deleteOutputs(action: Action): Promise<void> {
    for (const o of action.outputs) {
      const path = join(this.options.execRoot, o.execPath);
      this.digestCache.forget(path);
      // Usually absent or a file: one unlink. Anything else (a directory left by hand) goes whole.
      try {
        unlinkSync(path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') await rm(path, { recursive: true, force: true });
      }
    }
  }

  private async strategyFor(action: Action): Promise<SpawnStrategy | undefined> {
    const flags = this.options.strategies ?? {};
    // Detect the sandbox only when the action would use it.
    const ifSandboxable = chooseStrategy(action, flags, true);
    if (ifSandboxable.kind === 'chosen' && ifSandboxable.strategy === 'local') return this.local;
    const sandbox = await this.sandbox();
    const choice = chooseStrategy(action, flags, sandbox.strategy !== undefined);
    if (choice.kind === 'none') {
      const reason = sandbox.support.available ? '' : ` (${sandbox.support.reason})`;
      this.fail({ action, message: `${choice.message}${reason}` });
      return undefined;
    }
    const explicitSandbox = sandboxRequested(flags);
    if (!sandbox.support.available && explicitSandbox && !this.warnedSandbox && (choice.fellBackFromSandbox || choice.strategy === 'local')) {
      this.warnedSandbox = true;
      this.reporter.warning(`this machine cannot sandbox actions (${sandbox.support.reason}); running them locally`);
    }
    return choice.strategy === 'sandboxed' ? sandbox.strategy! : this.local;
  }

  private sandbox(): Promise<{ support: SandboxAvailability; strategy?: SpawnStrategy }> {
    this.sandboxed ??= this.spawners.sandbox().then(({ support, runner }) => ({ support, strategy: runner && new SandboxedStrategy(runner) }));
    return this.sandboxed;
  }

  private count(kind: ProcessKind): void {
    this.processes[kind]++;
  }

  private fail(failure: ActionFailure): false {
    this.failures.push(failure);
    this.reporter.actionFailed(failure);
    return false;
  }
}

function exitDescription(result: ProcessResult): string {
  if (result.signal) return `Killed by signal ${result.signal}`;
  return `Exit ${result.exitCode}`;
}

