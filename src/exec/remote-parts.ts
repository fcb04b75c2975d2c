// The remote half of execution, loaded only by a build with a remote cache or executor: it brings the
// gRPC stack, which a local build never needs (loading it costs every command ~40 ms).
export { RemoteOutputs } from './remote-outputs.js';
export { RemoteSpawnCache } from './remote-spawn-cache.js';
export { RemoteStrategy } from './remote-strategy.js';
