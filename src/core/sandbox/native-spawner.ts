import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { constants } from 'node:os';
import { capturedResult, OutputCapture } from './output-capture.js';
import type { ProcessResult } from './process-runner.js';
import type { SandboxStep } from './sandbox-plan.js';
import type { ProcessGroupSpec } from './spawn-process-group.js';

/** A run for a helper started with `sandbox`: the process runs inside a sandbox built from `steps`. */
export interface NativeRunSpec extends ProcessGroupSpec {
  readonly sandbox?: readonly SandboxStep[];
  /** With `sandbox`: cgroup.procs files the helper moves the sandbox into before anything runs in it. */
  readonly cgroups?: readonly string[] | undefined;
}

export interface NativeSpawnerOptions {
  /** A command prefix the helper runs under (see isolatedNetworkWrapper). */
  readonly wrapper?: readonly string[];
  /**
   * Makes it the native sandbox (native/sandbox.c): the helper takes this empty directory as its
   * private tmpfs and enters the namespaces its sandboxes share, or says why it cannot.
   */
  readonly sandboxBase?: string;
  /** With `sandboxBase`, a root helper only: the host user the sandboxed commands run as. */
  readonly sandboxUser?: { readonly uid: number; readonly gid: number };
  /** With `sandboxBase`: each sandbox gets a network namespace of its own (no network), not the helper's. */
  readonly networkPerRun?: boolean;
}

/** One-letter step kinds of the 'B' request (struct sandbox_op in native/kiln-spawn.h); 'L' is a symlink on a host mount. */
const STEP_CODES: Record<SandboxStep['kind'], string> = {
  'ro-bind': 'r',
  bind: 'w',
  dir: 'd',
  symlink: 'l',
  tmpfs: 't',
  'tmpfs-mount': 'm',
  proc: 'p',
  dev: 'v',
};

interface Running {
  readonly spec: NativeRunSpec;
  readonly started: number;
  readonly out: OutputCapture;
  readonly err: OutputCapture;
  timedOut: boolean;
  timer?: NodeJS.Timeout;
  onAbort?: () => void;
  resolve(result: ProcessResult): void;
  reject(error: Error): void;
}

/** The compiled helper (`npm run build` compiles it when a C compiler is present), or undefined. */
export function nativeSpawnerBinary(): string | undefined {
  // Beside the bundle (dist/bundle), from dist/src/core/sandbox, or from the sources under a test runner.
  for (const candidate of ['../native/kiln-spawn', '../../../native/kiln-spawn', '../../../dist/native/kiln-spawn']) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) return path;
  }
  return undefined;
}

/**
 * Starts processes from `kiln-spawn` (native/kiln-spawn.c), which uses posix_spawn: a child costs
 * ~0.1 ms to start there where Node's fork-based spawn costs ~0.8 ms of CPU even from a small
 * helper. Same contract as spawnProcessGroup: a new process group per child, killed whole on
 * timeout, abort or the leader's exit; exit code 127 with the reason on stderr when the program
 * cannot start. The helper dies with Kiln (PR_SET_PDEATHSIG, and it ends when its stdin closes).
 */
export class NativeSpawner {
  private child: ChildProcess | undefined;
  private ready: Promise<boolean> | undefined;
  private readonly running = new Map<number, Running>();
  private nextId = 1;
  private buffered: Buffer = Buffer.alloc(0);
  private refusal: string | undefined;

  constructor(
    private readonly binary: string,
    private readonly options: NativeSpawnerOptions = {},
  ) {}

  /** Why the helper ended before it started (a sandbox this machine does not allow), if it did. */
  get startFailure(): string | undefined {
    return this.refusal;
  }

  /** Starts the helper; true once it has said so, false when it could not start. */
  async started(): Promise<boolean> {
    const child = this.start();
    // Waiting for the answer must keep Kiln alive, as a pending run does.
    child.ref();
    try {
      return await this.ready!;
    } finally {
      // A helper closed meanwhile stays referenced: close() is waiting for its exit.
      if (this.running.size === 0 && this.child === child) child.unref();
    }
  }

  readonly run = (spec: NativeRunSpec): Promise<ProcessResult> => {
    const child = this.start();
    return new Promise<ProcessResult>((resolve, reject) => {
      const id = this.nextId++;
      const file = (sink: NativeRunSpec['stdout']) => (sink?.kind === 'file' ? sink.path : '');
      // The helper opens file sinks itself; OutputCapture then only collects pipes.
      const pipeOnly = (sink: NativeRunSpec['stdout']) => (sink?.kind === 'file' ? { kind: 'buffer' as const, limitBytes: 0 } : sink);
      const running: Running = {
        spec,
        started: performance.now(),
        out: new OutputCapture(pipeOnly(spec.stdout)),
        err: new OutputCapture(pipeOnly(spec.stderr)),
        timedOut: false,
        resolve,
        reject,
      };
      this.running.set(id, running);
      child.ref();
      const env = Object.entries(spec.env).map(([k, v]) => `${k}=${v}`);
      const strings = [spec.cwd, file(spec.stdout), file(spec.stderr), ...spec.argv, ...env];
      const steps = spec.sandbox ?? [];
      const cgroups = spec.sandbox ? (spec.cgroups ?? []) : [];
      const head = Buffer.alloc(spec.sandbox ? 16 : 8);
      head.writeUInt32LE(spec.argv.length, 0);
      head.writeUInt32LE(env.length, 4);
      if (spec.sandbox) {
        head.writeUInt32LE(steps.length, 8);
        head.writeUInt32LE(cgroups.length, 12);
      }
      const code = (step: SandboxStep) => (step.kind === 'symlink' && step.onHost ? 'L' : STEP_CODES[step.kind]);
      const stepText = steps.map((step) => code(step) + ('from' in step ? `${step.from}\0` : '') + `${step.at}\0`);
      const body = strings.map((s) => `${s}\0`).join('') + stepText.join('') + cgroups.map((file) => `${file}\0`).join('');
      this.send(spec.sandbox ? 'B' : 'R', id, Buffer.concat([head, Buffer.from(body)]));
      const kill = () => {
        const signal = Buffer.alloc(4);
        signal.writeInt32LE(constants.signals.SIGKILL, 0);
        this.send('K', id, signal);
      };
      if (spec.timeoutMs && spec.timeoutMs > 0) {
        running.timer = setTimeout(() => {
          running.timedOut = true;
          kill();
        }, spec.timeoutMs);
      }
      if (spec.signal) {
        running.onAbort = kill;
        spec.signal.addEventListener('abort', kill, { once: true });
        if (spec.signal.aborted) kill();
      }
    });
  };

  /** Ends the helper (its children are killed); runs still pending fail. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    this.failAll(new Error('the native spawner was closed'));
    child.ref();
    child.stdin?.end(); // the helper kills what still runs and exits
    if (child.exitCode === null && child.signalCode === null) await new Promise((resolve) => child.once('exit', resolve));
  }

  private start(): ChildProcess {
    if (this.child) return this.child;
    const { sandboxBase, sandboxUser, networkPerRun } = this.options;
    const sandbox =
      sandboxBase === undefined
        ? []
        : [
            '--sandbox',
            sandboxBase,
            ...(sandboxUser ? ['--user', `${sandboxUser.uid}:${sandboxUser.gid}`] : []),
            ...(networkPerRun ? ['--network-per-run'] : []),
          ];
    const [program, ...args] = [...(this.options.wrapper ?? []), this.binary, ...sandbox];
    // A session of its own: Ctrl-C reaches Kiln, which then kills what runs and reports it.
    const child = spawn(program!, args, { stdio: ['pipe', 'pipe', 'inherit'], detached: true });
    this.child = child;
    let signalReady: (ok: boolean) => void = () => {};
    this.ready = new Promise((resolve) => (signalReady = resolve));
    child.stdout!.on('data', (chunk: Buffer) => this.receive(chunk, () => signalReady(true)));
    const lost = (why: string) => {
      signalReady(false);
      if (this.child !== child) return; // closed
      this.child = undefined;
      this.failAll(new Error(`the native spawner ${why}`));
    };
    child.on('error', (e) => lost(`could not run: ${e.message}`));
    child.on('exit', (code, signal) => lost(`exited unexpectedly (${signal ?? `exit ${code}`})`));
    // A write after the helper died fails here; 'exit' has said why already.
    child.stdin!.on('error', () => {});
    child.unref();
    (child.stdout as unknown as { unref?: () => void }).unref?.();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    return child;
  }

  private send(type: string, id: number, payload: Buffer): void {
    const header = Buffer.alloc(9);
    header.writeUInt32LE(5 + payload.length, 0);
    header.write(type, 4, 'latin1');
    header.writeUInt32LE(id, 5);
    const stdin = this.child?.stdin;
    if (stdin) stdin.write(Buffer.concat([header, payload]));
  }

  private receive(chunk: Buffer, onStarted: () => void): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    let offset = 0;
    while (this.buffered.length - offset >= 4) {
      const length = this.buffered.readUInt32LE(offset);
      if (this.buffered.length - offset - 4 < length) break;
      const type = String.fromCharCode(this.buffered[offset + 4]!);
      const id = this.buffered.readUInt32LE(offset + 5);
      const payload = this.buffered.subarray(offset + 9, offset + 4 + length);
      offset += 4 + length;
      if (type === 'S') onStarted();
      else if (type === 'N') this.refusal = payload.toString();
      else this.handle(type, id, payload);
    }
    this.buffered = offset === this.buffered.length ? Buffer.alloc(0) : this.buffered.subarray(offset);
  }

  private handle(type: string, id: number, payload: Buffer): void {
    const running = this.running.get(id);
    if (!running) return;
    if (type === 'O') running.out.append(Buffer.from(payload));
    else if (type === 'E') running.err.append(Buffer.from(payload));
    else if (type === 'X') {
      const code = payload.readInt32LE(0);
      const signal = payload.readInt32LE(4);
      this.settle(id, code >= 0 ? code : null, code >= 0 ? null : signalName(signal));
    } else if (type === 'F') {
      const name = payload.subarray(4).toString('latin1');
      const { spec } = running;
      const text = `kiln: cannot run '${spec.argv[0] ?? ''}' in ${spec.cwd}: ${name}\n`;
      if (spec.stderr?.kind === 'file') appendFileSync(spec.stderr.path, text);
      else running.err.note(text);
      this.settle(id, 127, null);
    }
  }

  private settle(id: number, exitCode: number | null, signal: NodeJS.Signals | null): void {
    const running = this.running.get(id)!;
    this.running.delete(id);
    if (this.running.size === 0) this.child?.unref();
    if (running.timer) clearTimeout(running.timer);
    if (running.onAbort) running.spec.signal?.removeEventListener('abort', running.onAbort);
    const status = { exitCode, signal, timedOut: running.timedOut, wallTimeMs: performance.now() - running.started };
    capturedResult(running.out, running.err, status).then(running.resolve, running.reject);
  }

  private failAll(error: Error): void {
    for (const [id, running] of this.running) {
      this.running.delete(id);
      if (running.timer) clearTimeout(running.timer);
      running.reject(error);
    }
  }
}

function signalName(n: number): NodeJS.Signals {
  const found = Object.entries(constants.signals).find(([, value]) => value === n);
  return (found?.[0] ?? 'SIGKILL') as NodeJS.Signals;
}
