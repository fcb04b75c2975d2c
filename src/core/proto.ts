// The one door to the generated protocol code (proto/gen, produced by `npm run gen:proto`).
// Each proto package is a namespace: `reapi.Digest` is both the decoded interface and its codec
// (`reapi.Digest.encode(...)`, `.decode(...)`); `reapi.DigestInit` is what encode accepts;
// `reapi.ContentAddressableStorageService` is the @grpc/grpc-js service definition.
export * as reapi from '../../proto/gen/build/bazel/remote/execution/v2/index.js';
export * as semver from '../../proto/gen/build/bazel/semver/index.js';
export * as bytestream from '../../proto/gen/google/bytestream/index.js';
export * as longrunning from '../../proto/gen/google/longrunning/index.js';
export * as googleRpc from '../../proto/gen/google/rpc/index.js';
export * as wellKnown from '../../proto/gen/google/protobuf/index.js';
export * as kilnWorker from '../../proto/gen/kiln/worker/v1/index.js';
export * as blazeQuery from '../../proto/gen/blaze_query/index.js';
export * as grpcHealth from '../../proto/gen/grpc/health/v1/index.js';
// The Build Event Service (google.devtools.build.v1) and Bazel's Build Event Protocol it carries.
export * as googleBuild from '../../proto/gen/google/devtools/build/v1/index.js';
export * as buildEventStream from '../../proto/gen/build_event_stream/index.js';
// Bazel's analysis_v2.proto: aquery's action graph and cquery's proto results.
export * as analysisV2 from '../../proto/gen/analysis/index.js';
// Bazel's spawn.proto (package tools.protos): the execution log's SpawnExec and ExecLogEntry.
export * as spawnLog from '../../proto/gen/tools/protos/index.js';
export * as failureDetails from '../../proto/gen/failure_details/index.js';
// Bazel's bazel_flags.proto: `kiln help flags-as-proto`.
export * as bazelFlags from '../../proto/gen/bazel_flags/index.js';
export {
  asBuffer,
  packAny,
  unpackAny,
  TYPE_URL_PREFIX,
  type GrpcMethod,
  type MessageCodec,
} from '../../proto/gen/runtime.js';
