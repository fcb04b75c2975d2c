import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  googleRpc,
  grpcStatusOf,
  kilnWorker,
  msFromDuration,
  NotFoundError,
  packAny,
  type reapi,
  parseDigest,
  timestampFromMs,
  type Digest,
} from '../src/core/index.js';
import { BuildDirectories, prepareOutputParents } from './build-directory.js';
import { isRemoteCallError } from '../src/remote/index.js';
import type { ExecutorCas } from './cas-client.js';
import type { Runner } from './runners/runner.js';
import type { FileCache, InputHandOut } from './file-cache.js';
import { directoriesByDigest, materializeInputRoot } from './input-root.js';
import { collectOutputs } from './output-collector.js';

/** Hard links into the file cache only for actions that cannot change them (see Runner.actionUser). */
const INPUT_HAND_OUT: Record<NonNullable<Runner['actionUser']>, InputHandOut> = { separate: 'link', sandboxed: 'copy', unconfined: 'verified-copy' };

/** Error messages sent back are cut here: they may quote paths an action or a client chose. */
const MESSAGE_CHARS = 1000;

/**
 * stdout/stderr stay in memory up to this size (one batch-sized blob) and go to a file beyond it:
 * most actions print little, and a file per stream costs more than a no-op action itself.
 */
const OUTPUT_MEMORY_BYTES = 1024 * 1024;

export interface BuildExecutorOptions {
  readonly cas: ExecutorCas;
  readonly fileCache: FileCache;
  readonly runner: Runner;
  /** Build directories are made here; on the same file system as the file cache (hard links). */
  readonly buildRoot: string;
  /** ExecutedActionMetadata.worker. */
  readonly workerName: string;
}

/**
 * Runs one assignment end to end: input root into a fresh build directory (through the file cache),
 * the Command through the runner, outputs to the CAS, and an ExecuteResponse with every
 * ExecutedActionMetadata timestamp. The build directory is always removed. Infrastructure failures
 * become the response's status (missing inputs: FAILED_PRECONDITION; timeout: DEADLINE_EXCEEDED with
 * the partial result), so the scheduler always gets an answer.
 */
export class BuildExecutor {
  private readonly directories: BuildDirectories;
  /** Executions not yet over (their build directory not yet removed). */
  private readonly running = new Set<Promise<unknown>>();

  constructor(private readonly options: BuildExecutorOptions) {
    this.directories = new BuildDirectories(options.buildRoot);
  }

  /**
   * Waits for the executions still running (abort them first: the executor stops) to end, each
   * removing its process or container and build directory, then removes the directories kept for reuse.
   */
  async close(): Promise<void> {
    await Promise.allSettled([...this.running]);
    this.directories.close();
  }

  execute(assignment: kilnWorker.Assignment, reportStage: (stage: kilnWorker.TaskStage) => void, signal: AbortSignal): Promise<reapi.ExecuteResponseInit> {
    const execution = this.executeOnce(assignment, reportStage, signal);
    this.running.add(execution);
    const forget = (): void => void this.running.delete(execution);
    execution.then(forget, forget);
    return execution;
  }

  private async executeOnce(
    assignment: kilnWorker.Assignment,
    reportStage: (stage: kilnWorker.TaskStage) => void,
    signal: AbortSignal,
  ): Promise<reapi.ExecuteResponseInit> {
    const { cas, fileCache, runner } = this.options;
    const metadata: reapi.ExecutedActionMetadataInit = {
      worker: this.options.workerName,
      queuedTimestamp: assignment.queuedTimestamp,
      workerStartTimestamp: timestampFromMs(Date.now()),
    };
    let buildDirectory: string | undefined;
    const logs = {
      stdoutPath: join(this.options.buildRoot, `${assignment.taskId}.stdout`),
      stderrPath: join(this.options.buildRoot, `${assignment.taskId}.stderr`),
    };
    /** Whether a spill file may exist: from the start of the run until the runner says none was made. */
    let spilled = false;
    try {
      const action = assignment.action!;
      const command = assignment.command!;
      reportStage(kilnWorker.TaskStage.FETCHING_INPUTS);
      metadata.inputFetchStartTimestamp = timestampFromMs(Date.now());
      buildDirectory = this.directories.acquire(assignment.taskId.replace(/[^A-Za-z0-9_-]/g, '_'));
      await materializeInputRoot(
        cas,
        fileCache,
        parseDigest(action.inputRootDigest, 'Action.input_root_digest'),
        buildDirectory,
        INPUT_HAND_OUT[runner.actionUser ?? 'unconfined'],
        directoriesByDigest(assignment.inputDirectories),
      );
      const outputs = command.outputPaths.length > 0 ? command.outputPaths : [...command.outputFiles, ...command.outputDirectories];
      await prepareOutputParents(buildDirectory, command.workingDirectory, outputs, command.outputDirectories);
      metadata.inputFetchCompletedTimestamp = timestampFromMs(Date.now());
      signal.throwIfAborted();

      reportStage(kilnWorker.TaskStage.RUNNING);
      metadata.executionStartTimestamp = timestampFromMs(Date.now());
      const timeoutMs = assignment.timeout ? msFromDuration(assignment.timeout, 'assignment timeout') : 0;
      spilled = true;
      const outcome = await runner.run({
        buildDirectory,
        workingDirectory: command.workingDirectory,
        arguments: command.arguments,
        environment: Object.fromEntries(command.environmentVariables.map((v) => [v.name, v.value])),
        platform: (action.platform?.properties.length ? action.platform : command.platform)?.properties ?? [],
        timeoutMs,
        stdout: { kind: 'spill', memoryBytes: OUTPUT_MEMORY_BYTES, path: logs.stdoutPath },
        stderr: { kind: 'spill', memoryBytes: OUTPUT_MEMORY_BYTES, path: logs.stderrPath },
        signal,
      });
      spilled = outcome.stdoutSpilled || outcome.stderrSpilled;
      metadata.executionStartTimestamp = timestampFromMs(outcome.startedAtMs);
      metadata.executionCompletedTimestamp = timestampFromMs(outcome.completedAtMs);
      signal.throwIfAborted();

      reportStage(kilnWorker.TaskStage.UPLOADING_OUTPUTS);
      metadata.outputUploadStartTimestamp = timestampFromMs(Date.now());
      // Confining runners return once every process of the action is gone; collection never follows a link anyway.
      const collected = await collectOutputs(cas, buildDirectory, command, {
        stdout: outcome.stdoutSpilled ? { path: logs.stdoutPath } : outcome.stdout,
        stderr: outcome.stderrSpilled ? { path: logs.stderrPath } : outcome.stderr,
      });
      metadata.outputUploadCompletedTimestamp = timestampFromMs(Date.now());
      metadata.workerCompletedTimestamp = timestampFromMs(Date.now());
      const result: reapi.ActionResultInit = { ...collected, exitCode: outcome.exitCode, executionMetadata: metadata };
      if (outcome.timedOut) {
        return {
          result,
          status: { code: googleRpc.Code.DEADLINE_EXCEEDED, message: `the action exceeded its timeout of ${timeoutMs / 1000}s and was killed` },
        };
      }
      // ExecuteResponse.message is shown to the user: exit 137 alone does not say why.
      if (outcome.outOfMemory)
        return {
          result,
          status: { code: googleRpc.Code.OK },
          message: 'the action was killed: it went beyond its memory limit (the platform property max-mem asks for more)',
        };
      return { result, status: { code: googleRpc.Code.OK } };
    } catch (e) {
      return { status: failureStatus(e, assignment.actionDigest ?? undefined) };
    } finally {
      if (buildDirectory !== undefined) await this.directories.release(buildDirectory).catch(() => {});
      // Only a stream that outgrew memory made a file (a failed run may have left one too).
      if (spilled) await Promise.all([rm(logs.stdoutPath, { force: true }), rm(logs.stderrPath, { force: true })]);
    }
  }
}

function failureStatus(e: unknown, actionDigest: Digest | undefined): googleRpc.StatusInit {
  if (e instanceof NotFoundError || (isRemoteCallError(e) && (e.code as number) === googleRpc.Code.NOT_FOUND)) {
    // An input vanished from the CAS between validation and fetching: the client must upload it again.
    const subject = /([0-9a-f]{64})\/(\d+)/.exec(e.message);
    return {
      code: googleRpc.Code.FAILED_PRECONDITION,
      message: `an input of action ${actionDigest?.hash ?? ''} is missing from the CAS: ${e.message}`,
      details: subject ? [packAny(googleRpc.PreconditionFailure, { violations: [{ type: 'MISSING', subject: `blobs/${subject[1]}/${subject[2]}` }] })] : [],
    };
  }
  if (e instanceof Error && e.name === 'AbortError') return { code: googleRpc.Code.CANCELLED, message: 'the execution was cancelled' };
  // A CAS call that failed keeps its code (UNAVAILABLE, DEADLINE_EXCEEDED, ...): the scheduler retries on it.
  const { code, message } = isRemoteCallError(e) ? { code: e.code as number as googleRpc.Code, message: e.message } : grpcStatusOf(e);
  const errno = (e as NodeJS.ErrnoException).code;
  // The input root asks for a path this file system cannot hold: the request's fault, not ours.
  if (errno === 'ENAMETOOLONG' || errno === 'ELOOP') {
    return { code: googleRpc.Code.FAILED_PRECONDITION, message: truncate(`executor: the input root cannot be laid out here: ${message}`) };
  }
  return { code, message: truncate(`executor: ${message}`) };
}

function truncate(message: string): string {
  return message.length <= MESSAGE_CHARS ? message : `${message.slice(0, MESSAGE_CHARS)}… (${message.length} characters)`;
}
