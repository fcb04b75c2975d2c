import { NativeSpawner, nativeSpawnerBinary } from './native-spawner.js';
import { SpawnServer } from './spawn-server.js';
import type { ProcessGroupSpawner } from './spawn-server.js';

/** A helper process that starts processes for Kiln: the native one, or the Node one. */
export interface ProcessStarter {
  readonly run: ProcessGroupSpawner;
  /** Starts the helper; true once it answers, false when it could not start (e.g. its wrapper failed). */
  started(): Promise<boolean>;
  /** Ends the helper, waiting for it; runs still pending fail. */
  close(): Promise<void>;
}

/**
 * The native starter (posix_spawn, ~0.1 ms per process) when `npm run build` could compile it,
 * else the Node spawn server (fork, ~0.8 ms). `wrapper`: a command prefix the helper runs under.
 */
export function createProcessStarter(options: { readonly wrapper?: readonly string[] } = {}): ProcessStarter {
  const binary = nativeSpawnerBinary();
  return binary ? new NativeSpawner(binary, options) : new SpawnServer(options);
}
