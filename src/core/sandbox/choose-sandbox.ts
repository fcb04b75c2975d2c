import { chmodSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BubblewrapProcessRunner, isolatedNetworkWrapper } from './bubblewrap-process-runner.js';
import { detectSandboxSupport, type SandboxSupport } from './detect-sandbox-support.js';
import { NativeSandboxRunner } from './native-sandbox-runner.js';
import { probeHostUser, type HostUser } from './probe-host-user.js';
import type { ProcessRunner } from './process-runner.js';
import { createProcessStarter, type ProcessStarter } from './process-starter.js';
import { makeSandboxDirectory } from './sandbox-directory.js';
import { prepareSandboxEtc } from './sandbox-plan.js';
import type { ProcessGroupSpawner } from './spawn-server.js';

export interface SandboxOptions {
  /** The environment bwrap is looked up in (KILN_BWRAP, then PATH); default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** bwrap's availability, when the caller knows it (tests); detected otherwise. */
  readonly knownSupport?: SandboxSupport;
  /** false: skip the native sandbox and go straight to bubblewrap (tests of that fallback). */
  readonly native?: boolean;
  /**
   * When the caller is root: the host user sandboxed processes run as (nobody), so that they are
   * strangers to the caller's files. Ignored for any other caller, whose own user is all a sandbox
   * can map.
   */
  readonly hostUser?: HostUser;
  /**
   * Each sandbox gets a network namespace of its own, so concurrent sandboxes cannot reach each
   * other (an executor's actions belong to different clients). Otherwise they share one without a
   * network (a build's own actions), which costs half as much per process.
   */
  readonly networkPerRun?: boolean;
  /** Starts bwrap when no helper in an empty network namespace can (a spawn server's `run`). */
  readonly spawn?: ProcessGroupSpawner;
}

export type SandboxChoice =
  | {
      readonly available: true;
      readonly runner: ProcessRunner;
      /** The native sandbox (kiln-spawn) or the bubblewrap fallback. */
      readonly kind: 'native' | 'bubblewrap';
      /** `separate`: processes run as `hostUser`; `sandboxed`: as the caller's user (or root), confined. */
      readonly actionUser: 'separate' | 'sandboxed';
      /** bwrap's path, for a caller that waits for a killed sandbox's last processes (bubblewrap only). */
      readonly bwrapPath?: string;
      /** Why the sandbox is not the one preferred (native, with `hostUser`), for the caller to say once. */
      readonly note?: string;
      /** Ends the helpers and removes the sandbox's files. */
      close(): Promise<void>;
    }
  | { readonly available: false; readonly reason: string };

/**
 * The one place that chooses how Kiln sandboxes a process, for `kiln build --spawn_strategy=sandboxed`
 * and the executor's local runner alike: Kiln's native sandbox (as Bazel's linux-sandbox) when it is
 * compiled and the kernel allows it, else bubblewrap, else none (and why). Both run the same steps
 * (sandboxSteps), honour ProcessSpec.cgroups, and run a root caller's processes as `hostUser`.
 */
export async function chooseSandbox(options: SandboxOptions = {}): Promise<SandboxChoice> {
  const user = process.getuid?.() === 0 ? options.hostUser : undefined;
  const networkPerRun = options.networkPerRun === true;
  let nativeReason: string | undefined;
  if (options.native !== false) {
    const native = await NativeSandboxRunner.start({ ...(user ? { sandboxUser: user } : {}), networkPerRun });
    if (native instanceof NativeSandboxRunner) {
      return { available: true, runner: native, kind: 'native', actionUser: user ? 'separate' : 'sandboxed', close: () => native.close() };
    }
    nativeReason = native.reason;
  }
  const support = options.knownSupport ?? (await detectSandboxSupport(options.env ? { env: options.env } : {}));
  if (!support.available) return { available: false, reason: nativeReason ? `${nativeReason}; ${support.reason}` : support.reason };
  const chosen = await bubblewrapSandbox(support.bwrapPath, user, networkPerRun, options.spawn);
  if (!chosen.available || nativeReason === undefined) return chosen;
  const fallback = `bubblewrap sandboxes the actions: ${nativeReason}`;
  return { ...chosen, note: chosen.note ? `${fallback}; ${chosen.note}` : fallback };
}

async function bubblewrapSandbox(
  bwrapPath: string,
  user: HostUser | undefined,
  networkPerRun: boolean,
  spawn: ProcessGroupSpawner | undefined,
): Promise<SandboxChoice> {
  let isolated: ProcessStarter | undefined;
  let inIsolatedNetwork = false;
  if (!networkPerRun) {
    isolated = createProcessStarter({ wrapper: isolatedNetworkWrapper(bwrapPath) });
    inIsolatedNetwork = await isolated.started();
  }
  const directory = makeSandboxDirectory('kiln-sandbox-etc');
  // Read by bwrap, which may run as hostUser.
  chmodSync(directory, 0o755);
  const close = async () => {
    await isolated?.close();
    rmSync(directory, { recursive: true, force: true });
  };
  const common = {
    bwrapPath,
    etcDirectory: prepareSandboxEtc(join(directory, 'etc')),
    inIsolatedNetwork,
    ...(inIsolatedNetwork ? { spawn: isolated!.run } : spawn ? { spawn } : {}),
  };
  const sandboxed = { available: true, kind: 'bubblewrap', bwrapPath, close } as const;
  if (!user) return { ...sandboxed, runner: new BubblewrapProcessRunner(common), actionUser: 'sandboxed' };
  const hostUser = await probeHostUser(bwrapPath, user);
  if ('reason' in hostUser) {
    // The user exists only inside a user namespace of root: it owns what root owns, so inputs must be copies.
    const note = `sandboxed actions run in a user namespace of root, and get copies of their inputs: ${hostUser.reason}`;
    return { ...sandboxed, runner: new BubblewrapProcessRunner({ ...common, ...user }), actionUser: 'sandboxed', note };
  }
  return { ...sandboxed, runner: new BubblewrapProcessRunner({ ...common, hostUser }), actionUser: 'separate' };
}
