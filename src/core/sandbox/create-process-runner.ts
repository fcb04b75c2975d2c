import { BubblewrapProcessRunner } from './bubblewrap-process-runner.js';
import { detectSandboxSupport, type DetectSandboxOptions } from './detect-sandbox-support.js';
import { LocalProcessRunner } from './local-process-runner.js';
import type { ProcessRunner } from './process-runner.js';

export interface SandboxedProcessRunnerChoice {
  readonly runner: ProcessRunner;
  /** Why the plain runner was chosen, when the sandbox was wanted but is not available. */
  readonly fallbackReason?: string;
}

/** The namespace sandbox when this machine supports it, else the plain local runner and why. */
export async function createSandboxedProcessRunner(
  options: DetectSandboxOptions & { readonly uid?: number; readonly gid?: number } = {},
): Promise<SandboxedProcessRunnerChoice> {
  const support = await detectSandboxSupport(options);
  if (support.available) {
    return { runner: new BubblewrapProcessRunner({ bwrapPath: support.bwrapPath, uid: options.uid, gid: options.gid }) };
  }
  return { runner: new LocalProcessRunner(), fallbackReason: support.reason };
}
