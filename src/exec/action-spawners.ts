import {
  chooseSandbox,
  createProcessStarter,
  LocalProcessRunner,
  type ProcessRunner,
  type ProcessStarter,
  type SandboxChoice,
  type SandboxSupport,
} from '../core/sandbox/index.js';

/** Whether this machine can sandbox actions, and why not when it cannot. */
export type SandboxAvailability = { readonly available: true } | { readonly available: false; readonly reason: string };

/** The sandbox as this machine allows it: the runner when it can sandbox, and why not otherwise. */
export interface SandboxRunner {
  readonly support: SandboxAvailability;
  readonly runner?: ProcessRunner;
}

/**
 * The helper processes a build's actions start from (see createProcessStarter): one for local actions and,
 * once the sandbox is asked for, the sandbox chooseSandbox picks (the native sandbox, else bubblewrap
 * started from a helper inside an empty network namespace whose sandboxes share it), the same
 * choice the executor's local runner makes. Each starts on first
 * use; `warmUp` starts them at once, so that a caller can overlap their start-up (a Node process,
 * and bwrap's check and wrapper) with loading and analysis instead of making the first action
 * wait. The owner closes them.
 */
export class ActionSpawners {
  private readonly localServer: ProcessStarter = createProcessStarter();
  private chosen: Extract<SandboxChoice, { readonly available: true }> | undefined;
  private sandboxed: Promise<SandboxRunner> | undefined;
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
      const choice = await chooseSandbox({
        env: this.clientEnv,
        ...(this.knownSupport ? { knownSupport: this.knownSupport } : {}),
        native: this.options.nativeSandbox !== false,
        spawn: this.localServer.run,
      });
      if (!choice.available) return { support: choice };
      this.chosen = choice;
      return { support: { available: true }, runner: choice.runner };
    })();
    return this.sandboxed;
  }

  /** Ends the helper processes; runs still pending fail. */
  async close(): Promise<void> {
    // A sandbox still starting would be left running (and its directory behind) if not awaited.
    await this.sandboxed?.catch(() => undefined);
    await Promise.all([this.localServer.close(), this.chosen?.close()]);
  }
}
