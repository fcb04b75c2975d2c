import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { reapi, googleRpc, longrunning, bytestream, packAny, unpackAny, asBuffer } from '../../../src/core/proto.js';
import { protoRoot } from '../../../proto/gen/runtime.js';

const generatedRoot = protoRoot();

/**
 * upstream-wire-table.json lists every message field (name, number, label, type), enum value and RPC of
 * bazelbuild/remote-apis at the commit it names. It was produced from the upstream .proto text, which is
 * not available in CI; this test holds our generated code to it.
 */
interface WireTable {
  messages: Record<string, [string, number, string, string][]>;
  enums: Record<string, [string, number][]>;
  services: Record<string, [string, string, boolean, string, boolean][]>;
}
const table = JSON.parse(readFileSync(new URL('./upstream-wire-table.json', import.meta.url), 'utf8')) as WireTable;

/** protoc's JSON name, which the generated code uses for properties: fast_cdc_2020_params -> fastCdc2020Params. */
function jsonName(name: string): string {
  return name.replace(/_+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''));
}

function labelOf(f: protobuf.Field): string {
  if (f instanceof protobuf.MapField) return `map<${f.keyType}>`;
  return f.repeated ? 'repeated' : 'singular';
}
function typeOf(f: protobuf.Field): string {
  return f.resolvedType ? f.resolvedType.fullName.slice(1) : f.type;
}

describe('generated REAPI code against the upstream wire table', () => {
  it('covers the whole upstream API', () => {
    expect(Object.keys(table.messages).length).toBeGreaterThanOrEqual(59);
    expect(Object.keys(table.services).sort()).toEqual([
      'build.bazel.remote.execution.v2.ActionCache',
      'build.bazel.remote.execution.v2.Capabilities',
      'build.bazel.remote.execution.v2.ContentAddressableStorage',
      'build.bazel.remote.execution.v2.Execution',
    ]);
  });

  it.each(Object.entries(table.messages))('%s has the upstream fields', (name, fields) => {
    const type = generatedRoot.lookupType(name);
    const ours = type.fieldsArray.map((f) => [f.name, f.id, labelOf(f), typeOf(f)]).sort((a, b) => Number(a[1]) - Number(b[1]));
    const upstream = fields.map(([n, id, label, t]) => [jsonName(n), id, label, t]).sort((a, b) => Number(a[1]) - Number(b[1]));
    expect(ours).toEqual(upstream);
  });

  it.each(Object.entries(table.enums))('%s has the upstream values', (name, values) => {
    expect(Object.entries(generatedRoot.lookupEnum(name).values)).toEqual(values);
  });

  it.each(Object.entries(table.services))('%s has the upstream RPCs', (name, methods) => {
    const service = generatedRoot.lookupService(name);
    const ours = service.methodsArray.map((m) => [
      m.name,
      m.resolvedRequestType!.fullName.slice(1),
      !!m.requestStream,
      m.resolvedResponseType!.fullName.slice(1),
      !!m.responseStream,
    ]);
    expect(ours).toEqual(methods);
  });

  it('gives grpc-js definitions with upstream paths and streaming flags', () => {
    const defs: Record<string, Record<string, { path: string; requestStream: boolean; responseStream: boolean }>> = {
      'build.bazel.remote.execution.v2.Execution': reapi.ExecutionService,
      'build.bazel.remote.execution.v2.ActionCache': reapi.ActionCacheService,
      'build.bazel.remote.execution.v2.ContentAddressableStorage': reapi.ContentAddressableStorageService,
      'build.bazel.remote.execution.v2.Capabilities': reapi.CapabilitiesService,
    };
    for (const [service, methods] of Object.entries(table.services)) {
      for (const [method, , requestStream, , responseStream] of methods) {
        expect(defs[service]![method]).toMatchObject({ path: `/${service}/${method}`, requestStream, responseStream });
      }
    }
    expect(bytestream.ByteStreamService.Write).toMatchObject({ path: '/google.bytestream.ByteStream/Write', requestStream: true, responseStream: false });
    expect(bytestream.ByteStreamService.Read.responseStream).toBe(true);
    expect(Object.keys(longrunning.OperationsService).sort()).toEqual([
      'CancelOperation',
      'DeleteOperation',
      'GetOperation',
      'ListOperations',
      'WaitOperation',
    ]);
  });
});

/** A protobufjs root built only from the table (snake_case names, as on the wire), independent of our .proto files. */
function tableRoot(): protobuf.Root {
  const root = new protobuf.Root();
  for (const file of ['google/protobuf/any.proto', 'google/protobuf/duration.proto', 'google/protobuf/timestamp.proto', 'google/protobuf/wrappers.proto']) {
    root.addJSON(protobuf.common.get(file)!.nested!);
  }
  root.define('google.rpc').add(
    new protobuf.Type('Status')
      .add(new protobuf.Field('code', 1, 'int32'))
      .add(new protobuf.Field('message', 2, 'string'))
      .add(new protobuf.Field('details', 3, 'google.protobuf.Any', 'repeated')),
  );
  const types = new Map<string, protobuf.Type>();
  for (const [name, values] of Object.entries(table.enums)) {
    const { ns, local } = split(root, name);
    ns.add(new protobuf.Enum(local, Object.fromEntries(values)));
  }
  for (const name of Object.keys(table.messages).sort((a, b) => a.length - b.length)) {
    const { ns, local } = split(root, name);
    const type = new protobuf.Type(local);
    ns.add(type);
    types.set(name, type);
  }
  for (const [name, fields] of Object.entries(table.messages)) {
    for (const [field, id, label, type] of fields) {
      const ref = /^[a-z0-9]+$/.test(type) ? type : `.${type}`;
      const map = /^map<(.*)>$/.exec(label);
      types
        .get(name)!
        .add(map ? new protobuf.MapField(field, id, map[1]!, ref) : new protobuf.Field(field, id, ref, label === 'repeated' ? 'repeated' : undefined));
    }
  }
  root.resolveAll();
  return root;
}

/** The namespace (or enclosing message) a dotted name lives in, created on demand. */
function split(root: protobuf.Root, name: string): { ns: protobuf.Namespace; local: string } {
  const parts = name.split('.');
  const local = parts.pop()!;
  let ns: protobuf.Namespace = root;
  for (const part of parts) {
    const next = ns.get(part);
    ns = (next as protobuf.Namespace | null) ?? ns.define(part);
  }
  return { ns, local };
}

describe('wire round trips between generated code and the upstream table', () => {
  const upstream = tableRoot();
  const digest = (hash: string, sizeBytes: number) => ({ hash: hash.repeat(64).slice(0, 64), sizeBytes });

  it('an ActionResult encoded by us decodes upstream with every field in place', () => {
    const bytes = reapi.ActionResult.encode({
      outputFiles: [{ path: 'out/a.txt', digest: digest('a', 12), isExecutable: true, contents: Buffer.from('hello world\n') }],
      outputSymlinks: [{ path: 'out/link', target: 'a.txt' }],
      outputDirectories: [{ path: 'out/dir', treeDigest: digest('b', 300), isTopologicallySorted: true, rootDirectoryDigest: digest('c', 90) }],
      exitCode: 3,
      stdoutDigest: digest('d', 2 ** 40),
      stderrRaw: Buffer.from('warning'),
      executionMetadata: {
        worker: 'w1',
        queuedTimestamp: { seconds: 1_700_000_000, nanos: 5 },
        virtualExecutionDuration: { seconds: 2, nanos: 0 },
      },
    });
    const decoded = upstream.lookupType('build.bazel.remote.execution.v2.ActionResult').decode(bytes);
    const obj = upstream.lookupType('build.bazel.remote.execution.v2.ActionResult').toObject(decoded, { longs: Number, bytes: String });
    expect(obj).toEqual({
      output_files: [
        { path: 'out/a.txt', digest: { hash: 'a'.repeat(64), size_bytes: 12 }, is_executable: true, contents: Buffer.from('hello world\n').toString('base64') },
      ],
      output_symlinks: [{ path: 'out/link', target: 'a.txt' }],
      output_directories: [
        {
          path: 'out/dir',
          tree_digest: { hash: 'b'.repeat(64), size_bytes: 300 },
          is_topologically_sorted: true,
          root_directory_digest: { hash: 'c'.repeat(64), size_bytes: 90 },
        },
      ],
      exit_code: 3,
      stdout_digest: { hash: 'd'.repeat(64), size_bytes: 2 ** 40 },
      stderr_raw: Buffer.from('warning').toString('base64'),
      execution_metadata: { worker: 'w1', queued_timestamp: { seconds: 1_700_000_000, nanos: 5 }, virtual_execution_duration: { seconds: 2 } },
    });
  });

  it('a Command and an ExecuteRequest encoded upstream decode with our code', () => {
    const Command = upstream.lookupType('build.bazel.remote.execution.v2.Command');
    const commandBytes = Command.encode(
      Command.fromObject({
        arguments: ['bash', '-c', 'echo hi > out'],
        environment_variables: [{ name: 'PATH', value: '/bin' }],
        output_files: ['legacy'],
        output_directories: ['legacy_dir'],
        output_paths: ['out'],
        platform: { properties: [{ name: 'OSFamily', value: 'linux' }] },
        working_directory: 'pkg',
        output_node_properties: ['mtime'],
        output_directory_format: 2,
      }),
    ).finish();
    const command = reapi.Command.decode(commandBytes);
    expect(command.arguments).toEqual(['bash', '-c', 'echo hi > out']);
    expect(command.environmentVariables.map((e) => [e.name, e.value])).toEqual([['PATH', '/bin']]);
    expect([command.outputFiles, command.outputDirectories, command.outputPaths]).toEqual([['legacy'], ['legacy_dir'], ['out']]);
    expect(command.platform?.properties[0]).toMatchObject({ name: 'OSFamily', value: 'linux' });
    expect(command.workingDirectory).toBe('pkg');
    expect(command.outputNodeProperties).toEqual(['mtime']);
    expect(command.outputDirectoryFormat).toBe(reapi.Command_OutputDirectoryFormat.TREE_AND_DIRECTORY);

    const ExecuteRequest = upstream.lookupType('build.bazel.remote.execution.v2.ExecuteRequest');
    const request = reapi.ExecuteRequest.decode(
      ExecuteRequest.encode(
        ExecuteRequest.fromObject({
          instance_name: 'main',
          skip_cache_lookup: true,
          action_digest: { hash: 'e'.repeat(64), size_bytes: 140 },
          execution_policy: { priority: -5 },
          results_cache_policy: { priority: 2 },
          digest_function: 1,
          inline_stdout: true,
          inline_output_files: ['x'],
        }),
      ).finish(),
    );
    expect(request).toMatchObject({
      instanceName: 'main',
      skipCacheLookup: true,
      actionDigest: { hash: 'e'.repeat(64), sizeBytes: 140 },
      executionPolicy: { priority: -5 },
      resultsCachePolicy: { priority: 2 },
      digestFunction: reapi.DigestFunction_Value.SHA256,
      inlineStdout: true,
      inlineStderr: false,
      inlineOutputFiles: ['x'],
    });
  });

  it('capabilities survive the round trip, including the chunking parameters', () => {
    const ServerCapabilities = upstream.lookupType('build.bazel.remote.execution.v2.ServerCapabilities');
    const bytes = reapi.ServerCapabilities.encode({
      cacheCapabilities: {
        digestFunctions: [reapi.DigestFunction_Value.SHA256],
        actionCacheUpdateCapabilities: { updateEnabled: true },
        maxBatchTotalSizeBytes: 4 * 1024 * 1024,
        symlinkAbsolutePathStrategy: reapi.SymlinkAbsolutePathStrategy_Value.ALLOWED,
        supportedCompressors: [reapi.Compressor_Value.ZSTD],
        splitBlobSupport: true,
        spliceBlobSupport: true,
        fastCdc2020Params: { avgChunkSizeBytes: 524288, seed: 0 },
      },
      lowApiVersion: { major: 2 },
      highApiVersion: { major: 2, minor: 11 },
    });
    const obj = ServerCapabilities.toObject(ServerCapabilities.decode(bytes), { longs: Number });
    expect(obj).toEqual({
      cache_capabilities: {
        digest_functions: [1],
        action_cache_update_capabilities: { update_enabled: true },
        max_batch_total_size_bytes: 4194304,
        symlink_absolute_path_strategy: 2,
        supported_compressors: [1],
        split_blob_support: true,
        splice_blob_support: true,
        fast_cdc_2020_params: { avg_chunk_size_bytes: 524288 },
      },
      low_api_version: { major: 2 },
      high_api_version: { major: 2, minor: 11 },
    });
  });
});

describe('generated codecs', () => {
  it('decode 64-bit integers as numbers and bytes as Buffers that share memory with the input', () => {
    const bytes = reapi.BatchUpdateBlobsRequest.encode({
      requests: [{ digest: { hash: 'f'.repeat(64), sizeBytes: 2 ** 52 + 1 }, data: Buffer.from('abc') }],
    });
    const decoded = reapi.BatchUpdateBlobsRequest.decode(bytes);
    const first = decoded.requests[0]!;
    expect(first.digest?.sizeBytes).toBe(2 ** 52 + 1);
    expect(Buffer.isBuffer(first.data)).toBe(true);
    expect(first.data.toString()).toBe('abc');
    expect(first.data.buffer).toBe(bytes.buffer);
  });

  it('read absent fields as proto3 defaults', () => {
    const empty = reapi.ActionResult.decode(Buffer.alloc(0));
    expect(empty.exitCode).toBe(0);
    expect(empty.outputFiles).toEqual([]);
    expect(empty.stdoutRaw.length).toBe(0);
    expect(empty.stdoutDigest ?? null).toBeNull();
    const created = reapi.Digest.create({ hash: 'x' });
    expect([created.hash, created.sizeBytes]).toEqual(['x', 0]);
  });

  it('encode deterministically', () => {
    const msg = { commandDigest: { hash: 'a'.repeat(64), sizeBytes: 10 }, doNotCache: true, salt: Buffer.from([1, 2]) };
    expect(reapi.Action.encode(msg).equals(reapi.Action.encode({ ...msg }))).toBe(true);
  });

  it('reject malformed input with an error, not a crash', () => {
    expect(() => reapi.Digest.decode(Buffer.from([0x0a, 0x40, 0x61]))).toThrow();
  });

  it('pack and unpack Any with the type URL of the message', () => {
    const any = packAny(googleRpc.RetryInfo, { retryDelay: { seconds: 1, nanos: 500 } });
    expect(any.typeUrl).toBe('type.googleapis.com/google.rpc.RetryInfo');
    expect(unpackAny(googleRpc.RetryInfo, any)?.retryDelay).toMatchObject({ seconds: 1, nanos: 500 });
    expect(unpackAny(googleRpc.PreconditionFailure, any)).toBeUndefined();
    expect(Buffer.isBuffer(asBuffer(new Uint8Array([1])))).toBe(true);
  });
});

describe('canonical encoding', () => {
  it('omits zero-valued 64-bit fields as protoc does, so digests of messages match other clients', () => {
    const hash = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
    const bytes = reapi.Digest.encode({ hash, sizeBytes: 0 });
    expect(bytes.equals(Buffer.concat([Buffer.from([0x0a, 64]), Buffer.from(hash)]))).toBe(true);
    expect(reapi.Digest.decode(bytes).sizeBytes).toBe(0);
    expect(
      reapi.Digest.encode({ hash, sizeBytes: 300 })
        .subarray(66)
        .equals(Buffer.from([0x10, 0xac, 0x02])),
    ).toBe(true);
  });
});

describe('oneofs', () => {
  it('report which member of a oneof a decoded message holds', () => {
    const done = longrunning.Operation.decode(longrunning.Operation.encode({ name: 'op', done: true, error: { code: 5, message: 'gone' } }));
    expect(done.result).toBe('error');
    expect(done.error?.message).toBe('gone');
    const pending = longrunning.Operation.decode(longrunning.Operation.encode({ name: 'op' }));
    expect(pending.result).toBeUndefined();
  });
});
