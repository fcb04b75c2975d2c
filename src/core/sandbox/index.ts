export {
  type OutputSink,
  type ProcessSpec,
  type SandboxTree,
  type ProcessResult,
  type ProcessRunner,
  DEFAULT_OUTPUT_LIMIT_BYTES,
  exitStatusOf,
} from './process-runner.js';
export { LocalProcessRunner } from './local-process-runner.js';
export { spawnProcessGroup, type ProcessGroupSpec } from './spawn-process-group.js';
export { SpawnServer, type ProcessGroupSpawner, type SpawnServerOptions } from './spawn-server.js';
export { NativeSpawner, nativeSpawnerBinary, type NativeRunSpec, type NativeSpawnerOptions } from './native-spawner.js';
export { createProcessStarter, type ProcessStarter } from './process-starter.js';
export {
  BubblewrapProcessRunner,
  bubblewrapArguments,
  isolatedNetworkWrapper,
  type BubblewrapProcessRunnerOptions,
} from './bubblewrap-process-runner.js';
export { detectSandboxSupport, type SandboxSupport, type DetectSandboxOptions } from './detect-sandbox-support.js';
export { NativeSandboxRunner } from './native-sandbox-runner.js';
export { chooseSandbox, type SandboxChoice, type SandboxOptions } from './choose-sandbox.js';
export { probeHostUser, type HostUser } from './probe-host-user.js';
export { joiningCgroups } from './join-cgroups.js';
export { prepareSandboxEtc, sandboxSteps, type SandboxStep } from './sandbox-plan.js';
