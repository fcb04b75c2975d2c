import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BubblewrapProcessRunner,
  detectSandboxSupport,
  isolatedNetworkWrapper,
  createProcessStarter,
  LocalProcessRunner,
  NativeSandboxRunner,
  prepareSandboxEtc,
  type ProcessRunner,
  type ProcessStarter,
  type SandboxSupport,
} from '../core/index.js';

/** Whether this machine can sandbox actions, and why not when it cannot. */
export type SandboxAvailability = { readonly available: true } | { readonly available: false; readonly reason: string };

/** The sandbox as this machine allows it: the runner when it can sandbox, and why not otherwise. */
export interface SandboxRunner {
  readonly support: SandboxAvailability;
  readonly runner?: ProcessRunner;
}

/**
 * The helper processes a build's actions start from (see createProcessStarter): one for local actions and,
 * once the sandbox is asked for, the native sandbox's (NativeSandboxRunner). Where that cannot run
 * (not compiled, or a kernel that refuses it), bubblewrap, started from a helper inside an empty
 * network namespace whose sandboxes share it (or with a namespace per sandbox where that
 * wrapper cannot start). Each starts on first
 * use; `warmUp` starts them at once, so that a caller can overlap their start-up (a Node process,
 * and bwrap's check and wrapper) with loading and analysis instead of making the first action
 * wait. The owner closes them.
 */
export class ActionSpawners {
  private readonly localServer: ProcessStarter = createProcessStarter();
  private isolatedServer: ProcessStarter | undefined;
  private nativeSandbox: NativeSandboxRunner | undefined;
  private sandboxed: Promise<SandboxRunner> | undefined;
  /** The sandbox's /etc for this build (see prepareSandboxEtc). */
  private etcDirectory: string | undefined;
  readonly local: ProcessRunner = new LocalProcessRunner(this.localServer.run);

  /** `knownSupport`: bwrap's availability, when the caller knows (tests); detected otherwise. */
  /** `nativeSandbox: false` goes straight to bubblewrap (tests of that fallback). */
  constructor(
    private readonly clientEnv: Readonly<Record<string, string | undefined>>,
    private readonly knownSupport?: SandboxSupport,
    private readonly options: { readonly nativeSandbox?: boolean | undefined } = {},
  ) {}

  /** Starts the helper processes now, in the background: the sandbox's only if it may be used. */
  warmUp(options: { readonly sandbox: boolean }): this {
    void this.localServer.started();
    if (options.sandbox) void this.sandbox();
    return this;
  }

  /** The sandbox runner, detecting support and starting its helper on the first call. */
  sandbox(): Promise<SandboxRunner> {
    this.sandboxed ??= (async () => {
      if (this.knownSupport?.available === false) return { support: this.knownSupport };
      const native = this.options.nativeSandbox === false ? { reason: 'the native sandbox is off' } : await NativeSandboxRunner.start();
      if (native instanceof NativeSandboxRunner) {
        this.nativeSandbox = native;
        return { support: { available: true }, runner: native };
      }
      const support = this.knownSupport ?? (await detectSandboxSupport({ env: this.clientEnv }));
      if (!support.available) return { support: { available: false, reason: `${native.reason}; ${support.reason}` } };
      const isolated = createProcessStarter({ wrapper: isolatedNetworkWrapper(support.bwrapPath) });
      this.isolatedServer = isolated;
      const inIsolatedNetwork = await isolated.started();
      this.etcDirectory = mkdtempSync(join(tmpdir(), 'kiln-sandbox-etc-'));
      const runner = new BubblewrapProcessRunner({
        bwrapPath: support.bwrapPath,
        spawn: inIsolatedNetwork ? isolated.run : this.localServer.run,
        inIsolatedNetwork,
        etcDirectory: prepareSandboxEtc(this.etcDirectory),
      });
      return { support, runner };
    })();
    return this.sandboxed;
  }

  /** Ends the helper processes; runs still pending fail. */
  async close(): Promise<void> {
    // A sandbox still starting would be left running (and its directory behind) if not awaited.
    await this.sandboxed?.catch(() => undefined);
    await Promise.all([this.localServer.close(), this.isolatedServer?.close(), this.nativeSandbox?.close()]);
    if (this.etcDirectory) rmSync(this.etcDirectory, { recursive: true, force: true });
  }
}
