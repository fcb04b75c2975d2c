import { spawn } from 'node:child_process';
import { capturedResult, OutputCapture } from './output-capture.js';
import type { OutputSink, ProcessResult } from './process-runner.js';

export interface ProcessGroupSpec {
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
  readonly stdout?: OutputSink;
  readonly stderr?: OutputSink;
  readonly signal?: AbortSignal | undefined;
}

/**
 * Spawns argv as the leader of a new process group and waits for it. On timeout or abort the
 * whole group is killed; when the leader exits, whatever it left running in its group is killed
 * too, so an action's processes never outlive it (and never hold its output pipes open).
 * A program that cannot be started ends with exit code 127 and the reason on stderr, as a shell does.
 * Rejects only when a spill sink's file cannot be written.
 */
export function spawnProcessGroup(spec: ProcessGroupSpec): Promise<ProcessResult> {
  const started = performance.now();
  const out = new OutputCapture(spec.stdout);
  let err: OutputCapture;
  try {
    err = new OutputCapture(spec.stderr);
  } catch (e) {
    out.closeFile();
    throw e;
  }
  return new Promise<ProcessResult>((resolve, reject) => {
    let timedOut = false;
    let settled = false;
    const [file, ...args] = spec.argv;
    const child = spawn(file ?? '', args, {
      cwd: spec.cwd,
      env: { ...spec.env },
      stdio: ['ignore', out.stdio, err.stdio],
      detached: true,
    });
    out.closeFile();
    err.closeFile();
    out.attach(child.stdout);
    err.attach(child.stderr);

    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is already gone.
      }
    };
    const timer =
      spec.timeoutMs && spec.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            killGroup();
          }, spec.timeoutMs)
        : undefined;
    const onAbort = (): void => killGroup();
    spec.signal?.addEventListener('abort', onAbort, { once: true });
    if (spec.signal?.aborted) killGroup();

    const finish = (exitCode: number | null, signal: NodeJS.Signals | null): void => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      spec.signal?.removeEventListener('abort', onAbort);
      capturedResult(out, err, { exitCode, signal, timedOut, wallTimeMs: performance.now() - started }).then(resolve, reject);
    };
    child.on('exit', () => killGroup());
    // 'close' comes after 'exit' once the pipes are drained.
    child.on('close', (code, signal) => finish(code, signal));
    child.on('error', (e: NodeJS.ErrnoException) => {
      err.note(`kiln: cannot run '${file}' in ${spec.cwd}: ${e.code ?? e.message}\n`);
      finish(127, null);
    });
  });
}
