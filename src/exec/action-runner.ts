import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { computeActionKey, localActionKey, type Action, type ActionKey, type Artifact, type InputEntry, type ProducedOutput } from '../actions/index.js';
import { isKilnError } from '../core/index.js';
import type { ProcessResult } from '../core/sandbox/index.js';
import { actionEnvironment, buildActionEnvironment, isExecConfigurationAction } from './action-environment.js';
import type { ActionSpawners, SandboxAvailability } from './action-spawners.js';
import { scriptedCommand } from './command-script.js';
import { deleteDeclaredOutputs, digestDeclaredOutputs, missingOutputsMessage } from './declared-outputs.js';
import { DynamicStrategy } from './dynamic-strategy.js';
import { formatCommand, PROCESS_KIND_ORDER, type ActionFailure, type ExecutionReporter, type ProcessKind } from './execution-reporter.js';
import type { ExecutionOptions } from './execute-actions.js';
import type { FileDigestCache } from './file-digest-cache.js';
import { InProcessFailure, performInProcessWork } from './in-process-work.js';
import { LiveOutputPipe } from './live-output.js';
import { LocalStrategy } from './local-strategy.js';
import { ProcessSlots } from './process-slots.js';
import type { RemoteOutputs } from './remote-outputs.js';
import type { RemoteStrategy } from './remote-strategy.js';
import { SandboxedStrategy } from './sandboxed-strategy.js';
import type { ScratchDirectories } from './scratch-directories.js';
import type { CacheMiss, SpawnCache } from './spawn-cache.js';
import { RemoteExecutionFailure, type SlotUse, type SpawnStrategy } from './spawn-strategy.js';
import { chooseStrategy, dynamicBranchStrategies, mayBeSandboxed, sandboxRequested } from './strategy-selection.js';

/** Thrown through a strategy when the build stopped before the action's process could start. */
const SKIPPED = Symbol('skipped');
/** The mnemonic of test runs (TestRunner, as Bazel names them): --local_test_jobs bounds them. */
const TEST_MNEMONIC = 'TestRunner';

/** The sandboxed strategy when this machine can sandbox, and what detection found. */
interface SandboxChoice {
  readonly support: SandboxAvailability;
  readonly strategy: SpawnStrategy | undefined;
}

/**
 * One action's pipeline, for the scheduling pump of executeActions: its inputs' digests, the spawn-cache
 * chain, and on a miss a strategy (local, sandboxed, remote or a dynamic race) run within the --jobs
 * slots, its outputs checked, recorded and stored through the cache handle. Holds what one build's
 * actions share: failures, process counts, and the digests of outputs produced so far.
 */
export class ActionRunner {
  /** What every action gets besides its own variables (PATH, --action_env). */
  private readonly baseEnvironment: Readonly<Record<string, string>>;
  /** The exec configuration's (`--host_action_env`); the target's when not given. */
  private readonly execBaseEnvironment: Readonly<Record<string, string>>;
  readonly failures: ActionFailure[] = [];
  readonly processes: Record<ProcessKind, number> = Object.fromEntries(PROCESS_KIND_ORDER.map((k) => [k, 0])) as Record<ProcessKind, number>;
  /** Outputs produced or verified in this build (digests, trees' contents), so dependents need not stat them. */
  private readonly outputDigests = new Map<string, ProducedOutput>();
  private readonly local: LocalStrategy;
  private readonly remote: RemoteStrategy | undefined;
  /** The remote half of dynamic execution: no local fallback (the race has its local half). */
  private readonly remoteForRace: RemoteStrategy | undefined;
  private warnedDynamic = false;
  /** Dynamic execution's races, by the local strategy they race (sandboxed or local) against the remote one. */
  private readonly races = new Map<SpawnStrategy, SpawnStrategy>();
  private sandboxed: Promise<SandboxChoice> | undefined;
  private warnedSandbox = false;
  /** A process exited unsuccessfully; its failure may not be recorded yet. */
  private processFailed = false;
  /** `--local_test_jobs`: test processes here at once, taken before a --jobs slot. */
  private readonly testSlots: ProcessSlots | undefined;

  constructor(
    private readonly options: ExecutionOptions,
    private readonly reporter: ExecutionReporter,
    private readonly digestCache: FileDigestCache,
    private readonly caches: SpawnCache,
    private readonly scratch: ScratchDirectories,
    private readonly slots: ProcessSlots,
    /** Held by an action from its cache miss to its end. */
    private readonly pastLookup: ProcessSlots,
    private readonly spawners: ActionSpawners,
    private readonly remoteOutputs: RemoteOutputs | undefined,
    /** The remote strategy's class, loaded with the remote half of execution (remote-parts.ts). */
    remoteStrategy: typeof RemoteStrategy | undefined,
  ) {
    this.baseEnvironment = options.actionEnv ?? buildActionEnvironment(options.clientEnv);
    this.execBaseEnvironment = options.hostActionEnv ?? this.baseEnvironment;
    this.testSlots = options.localTestJobs ? new ProcessSlots(options.localTestJobs) : undefined;
    this.local = new LocalStrategy(spawners.local);
    const remote = options.remote;
    if (remote?.client.executorEndpoint && remoteOutputs && remoteStrategy) {
      this.remote = new remoteStrategy(remote.client, digestCache, {
        acceptCached: remote.acceptCached,
        ...(remote.localFallback ? { fallback: this.local } : {}),
        warn: (message) => reporter.warning(message),
        outputs: remoteOutputs,
      });
      this.remoteForRace = new remoteStrategy(remote.client, digestCache, {
        acceptCached: remote.acceptCached,
        warn: (message) => reporter.warning(message),
        outputs: remoteOutputs,
      });
    }
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
      this.fail({ action, message, ...(e instanceof RemoteExecutionFailure ? { exitCode: e.exitCode } : {}) });
      return 'failed';
    }
  }

  private async executeOrFail(declared: Action): Promise<boolean | 'skipped'> {
    const inputs = await this.digestInputs(declared);
    if (typeof inputs === 'string') return this.fail({ action: declared, message: inputs });
    const action = this.withTreesExpanded(declared);
    const env = actionEnvironment(action, isExecConfigurationAction(action) ? this.execBaseEnvironment : this.baseEnvironment);
    let key: ActionKey | undefined;
    // The target's exec_properties over --remote_default_exec_properties, as Bazel merges them.
    const platform = { ...this.options.remote?.defaultExecProperties, ...action.execProperties };
    const remoteKey = () => (key ??= computeActionKey(action, { env, inputs, platform }));
    const found = await this.caches.lookup({ action, env, inputs, localKey: localActionKey(action, env, inputs, platform), remoteKey });
    if (found.kind === 'hit') {
      this.recordOutputs(found.outputs);
      if (found.remoteOnly && this.remoteOutputs?.wanted(action)) await this.remoteOutputs.fetchOutputs(found.outputs);
      else if (found.remoteOnly) this.remoteOutputs?.leftRemote(found.outputs);
      if (found.processKind) this.count(found.processKind);
      this.reporter.actionFinished(action, found.processKind);
      return true;
    }
    const release = await this.pastLookup.acquire();
    try {
      if (this.stopping()) return 'skipped';
      if (action.inProcess) return await this.runInProcess(action, found);
      const strategy = await this.strategyFor(action);
      if (!strategy) return false;
      if (this.stopping()) return 'skipped';
      return await this.spawn(action, strategy, env, found, inputs, remoteKey);
    } finally {
      release();
    }
  }

  /**
   * Runs the action's process, checks and records its outputs, and stores them through the cache
   * handle. Only the process itself holds one of the --jobs slots: preparing its directories and
   * hashing its outputs overlap with other processes.
   */
  private async spawn(
    action: Action,
    strategy: SpawnStrategy,
    env: Record<string, string>,
    cache: CacheMiss,
    inputs: readonly InputEntry[],
    remoteKey: () => ActionKey,
  ): Promise<boolean | 'skipped'> {
    const execRoot = this.options.execRoot;
    await deleteDeclaredOutputs(action, execRoot, this.digestCache);
    const scratchDir = this.scratch.acquire();
    const signal = this.options.signal;
    try {
      // Inputs a remote action left on the server come here before a process here reads them.
      if (strategy.name !== 'remote') await this.remoteOutputs?.fetchInputs(action);
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
      const withSlot = async (start: () => Promise<ProcessResult>, how: SlotUse = {}): Promise<ProcessResult> => {
        // Remote executions take no local slot: they are bounded by the actions in flight.
        const local = how.localSlot !== false;
        const releaseTest = local && this.testSlots && action.mnemonic === TEST_MNEMONIC ? await this.testSlots.acquire() : () => {};
        const releaseJob = local ? await this.slots.acquire() : () => {};
        const release = () => {
          releaseJob();
          releaseTest();
        };
        try {
          if (this.stopping()) throw SKIPPED;
          this.reporter.actionStarted(action, how.runnerName ?? strategy.runnerName, command);
          const result = await start();
          // Said before the slot passes on, so without --keep_going no further process starts.
          if (result.exitCode !== 0 && !how.abandoned?.() && !action.exitCodeIsResult) this.processFailed = true;
          return result;
        } finally {
          release();
        }
      };
      const receiver = strategy.name === 'remote' ? undefined : this.options.liveOutput?.(action);
      const live = receiver && (await LiveOutputPipe.open(join(scratchDir, 'live-output'), receiver));
      let result;
      try {
        const spawnLive = live ? { liveOutput: live.path } : {};
        result = await strategy.exec({
          action,
          inputs,
          remoteKey,
          argv,
          env,
          execRoot,
          scratchDir,
          signal,
          withSlot,
          ...spawnLive,
          ...(scripted ? { commandScript } : {}),
        });
      } catch (e) {
        if (e === SKIPPED) return 'skipped';
        throw e;
      } finally {
        await live?.close();
      }
      if (signal?.aborted) {
        await deleteDeclaredOutputs(action, execRoot, this.digestCache);
        return this.fail({ action, message: `${action.progressMessage} interrupted` });
      }
      // A test's non-zero exit is its result: outputs kept, nothing cached (see Action.exitCodeIsResult).
      const resultIsFailure = result.exitCode !== 0;
      if (resultIsFailure && !action.exitCodeIsResult) {
        await deleteDeclaredOutputs(action, execRoot, this.digestCache);
        const where = result.detail ? `${command}\n(${result.detail})` : command;
        return this.fail({
          action,
          message: `${action.progressMessage} failed (${exitDescription(result)})`,
          command: where,
          stdout: result.stdout,
          stderr: result.stderr,
        });
      }
      const { outputs, missing, invalid } = result.remoteOutputs
        ? {
            outputs: [...result.remoteOutputs],
            missing: action.outputs.map((o) => o.execPath).filter((p) => !result.remoteOutputs!.some((r) => r.path === p)),
            invalid: undefined,
          }
        : await digestDeclaredOutputs(action, execRoot, this.digestCache);
      // A test killed at its timeout could not finish its files; that is its result, which the caller completes (as Bazel's test strategy).
      const killedTest = action.exitCodeIsResult === true && result.timedOut;
      if ((missing.length > 0 && !killedTest) || invalid) {
        await deleteDeclaredOutputs(action, execRoot, this.digestCache);
        return this.fail({
          action,
          message: `${action.progressMessage} failed: ${invalid ?? missingOutputsMessage(missing)}`,
          command,
          stdout: result.stdout,
          stderr: result.stderr,
        });
      }
      this.recordOutputs(outputs);
      const ranAs = result.ranAs ?? strategy.runnerName;
      if (result.remoteOutputs) this.remoteOutputs?.leftRemote(outputs);
      if (!resultIsFailure) await cache.store({ outputs, ranAs, ...(result.remoteOutputs ? { remoteOnly: true } : {}) });
      this.count(ranAs);
      this.reporter.actionFinished(action, ranAs, { exitCode: result.exitCode ?? -1, timedOut: result.timedOut, wallTimeMs: result.wallTimeMs });
      // A test's output is its log's; anything else's is shown, as Bazel's `INFO: From ...`.
      if (!action.exitCodeIsResult && (result.stdout?.length || result.stderr?.length)) {
        this.reporter.actionOutput?.(action, { stdout: result.stdout ?? Buffer.alloc(0), stderr: result.stderr ?? Buffer.alloc(0) });
      }
      return true;
    } finally {
      this.scratch.release(scratchDir);
    }
  }

  /**
   * Writes an in-process action's one output here (no process, no slot), then records it like any
   * output. Only the local action cache keeps it: the REAPI key does not cover in-process work.
   */
  private async runInProcess(action: Action, cache: CacheMiss): Promise<boolean> {
    const execRoot = this.options.execRoot;
    await deleteDeclaredOutputs(action, execRoot, this.digestCache);
    const output = action.outputs[0]!;
    const path = join(execRoot, output.execPath);
    try {
      // Its template or link target may be an output a remote action left on the server.
      await this.remoteOutputs?.fetchInputs(action);
      await performInProcessWork(action.inProcess!, execRoot, path);
    } catch (e) {
      await deleteDeclaredOutputs(action, execRoot, this.digestCache);
      if (e instanceof InProcessFailure) return this.fail({ action, message: e.message });
      return this.fail({ action, message: `${action.progressMessage} failed: ${(e as Error).message}` });
    }
    const { outputs, missing, invalid } = await digestDeclaredOutputs(action, execRoot, this.digestCache);
    if (missing.length > 0 || invalid) return this.fail({ action, message: `${action.progressMessage} failed: ${invalid ?? missingOutputsMessage(missing)}` });
    this.recordOutputs(outputs);
    await cache.store({ outputs, ranAs: 'internal' });
    this.count('internal');
    this.reporter.actionFinished(action, 'internal');
    return true;
  }

  /**
   * The action with its command line made once the contents of its tree inputs are known (Args
   * that expand directories); the action itself otherwise. Copied with its property descriptors.
   */
  private withTreesExpanded(action: Action): Action {
    if (!action.argvWithTrees) return action;
    const argv = action.argvWithTrees((tree) => {
      const known = this.outputDigests.get(tree);
      if (known?.kind !== 'tree') return [];
      return known.tree.files
        .map((f) => `${tree}/${f.path}`)
        .concat(known.tree.symlinks.map((l) => `${tree}/${l.path}`))
        .sort();
    });
    // Only a command line that did change makes a copy: failures and progress keep naming the action itself.
    const before = action.argv;
    if (argv.length === before.length && argv.every((a, i) => a === before[i])) return action;
    const copy = Object.create(Object.getPrototypeOf(action) as object, Object.getOwnPropertyDescriptors(action)) as Action;
    Object.defineProperty(copy, 'argv', { value: argv, enumerable: true });
    return copy;
  }

  /**
   * The inputs of an action as input-root entries (files hashed concurrently; a tree artifact as its
   * directories, files and symlinks; a declared symlink as itself), or the message of the first problem.
   */
  private async digestInputs(action: Action): Promise<InputEntry[] | string> {
    const results = await Promise.all(
      action.inputs.map(async (input): Promise<InputEntry[] | InputEntry | string> => {
        const known = this.outputDigests.get(input.execPath);
        if (known) return inputEntriesOf(known);
        if (isTreeOrSymlink(input)) return `${action.owner}: input '${input.execPath}' was not made by an action of this build`;
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
    return problem ?? (results as (InputEntry | InputEntry[])[]).flat();
  }

  private recordOutputs(outputs: readonly ProducedOutput[]): void {
    for (const o of outputs) this.outputDigests.set(o.path, o);
  }

  private async strategyFor(action: Action): Promise<SpawnStrategy | undefined> {
    const flags = this.options.strategies ?? {};
    const canRemote = this.remote !== undefined;
    // Detect the sandbox only when the action would use it.
    const ifSandboxable = chooseStrategy(action, flags, true, canRemote);
    if (ifSandboxable.kind === 'chosen' && ifSandboxable.strategy === 'local') return this.local;
    if (ifSandboxable.kind === 'chosen' && ifSandboxable.strategy === 'remote') return this.remote;
    if (ifSandboxable.kind === 'chosen' && ifSandboxable.strategy === 'dynamic') return this.dynamic(action);
    const sandbox = await this.sandbox();
    const choice = chooseStrategy(action, flags, sandbox.strategy !== undefined, canRemote);
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
    if (choice.strategy === 'remote') return this.remote;
    return choice.strategy === 'sandboxed' ? sandbox.strategy! : this.local;
  }

  /**
   * Dynamic execution: the first strategy of `--dynamic_local_strategy` (default sandboxed) that can
   * run the action here, raced against the remote one; remote alone when none can (as Bazel does),
   * with one warning when it is the machine that cannot sandbox.
   */
  private async dynamic(action: Action): Promise<SpawnStrategy> {
    const race = (local: SpawnStrategy) => {
      let raced = this.races.get(local);
      if (!raced) this.races.set(local, (raced = new DynamicStrategy(local, this.remoteForRace!)));
      return raced;
    };
    let unsandboxable: SandboxAvailability | undefined;
    for (const name of dynamicBranchStrategies(this.options.strategies ?? {}, 'local', action.mnemonic)) {
      if (name === 'local') return race(this.local);
      if (!mayBeSandboxed(action)) continue;
      const sandbox = await this.sandbox();
      if (sandbox.strategy) return race(sandbox.strategy);
      unsandboxable = sandbox.support;
    }
    if (unsandboxable && !this.warnedDynamic) {
      this.warnedDynamic = true;
      const reason = unsandboxable.available ? '' : ` (${unsandboxable.reason})`;
      this.reporter.warning(`dynamic execution runs its local branch sandboxed and this machine cannot sandbox${reason}; running actions remotely only`);
    }
    return this.remote!;
  }

  private sandbox(): Promise<SandboxChoice> {
    return (this.sandboxed ??= this.spawners
      .sandbox()
      .then(({ support, runner }) => ({ support, strategy: runner && new SandboxedStrategy(runner, this.options.sandboxPaths) })));
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

function isTreeOrSymlink(input: Artifact): boolean {
  return input.kind === 'derived' && input.type !== undefined;
}

/** An output as the input-root entries of a dependent: a tree's root, subdirectories, files and symlinks. */
function inputEntriesOf(output: ProducedOutput): InputEntry | InputEntry[] {
  if (output.kind === undefined) return output; // a produced file is an input file as it is
  if (output.kind === 'symlink') return { kind: 'symlink', path: output.path, target: output.target };
  const at = (p: string) => `${output.path}/${p}`;
  return [
    { kind: 'directory', path: output.path },
    ...output.tree.directories.map((d): InputEntry => ({ kind: 'directory', path: at(d) })),
    ...output.tree.files.map((f): InputEntry => ({ path: at(f.path), digest: f.digest, isExecutable: f.isExecutable })),
    ...output.tree.symlinks.map((l): InputEntry => ({ kind: 'symlink', path: at(l.path), target: l.target })),
  ];
}

function exitDescription(result: ProcessResult): string {
  if (result.signal) return `Killed by signal ${result.signal}`;
  return `Exit ${result.exitCode}`;
}
