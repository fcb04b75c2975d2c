import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { ExitCode, reapi } from '../../src/core/index.js';
import { startHostileReapiServer, type HostileReapiServer } from '../remote/hostile-reapi-server.js';
import { E2eWorkspace } from './e2e-workspace.js';

// `kiln build` against a server that stalls or asks for an hour's wait: the build ends within
// (retries + 1) x --remote_timeout + retries x --remote_retry_max_delay, with a message naming the
// call and the endpoint. A remote cache that fails a hit is a warning and the action runs locally,
// as in Bazel; a failed remote execution fails the build with Bazel's remote-error code, 34.
const TIMEOUT_S = 2;
const RETRIES = 1;
const MAX_DELAY_MS = 500;
const BOUND_MS = (RETRIES + 1) * TIMEOUT_S * 1000 + RETRIES * MAX_DELAY_MS;
/** CLI start-up, loading and analysis in-process, on a shared machine. */
const MARGIN_MS = 4000;

let server: HostileReapiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const WORKSPACE = {
  'MODULE.bazel': '',
  BUILD: 'genrule(name = "out", outs = ["out.txt"], cmd = "echo hello > $@")\n',
};

async function build(flag: '--remote_executor' | '--remote_cache'): Promise<{ code: number; stderr: string; ms: number }> {
  const ws = new E2eWorkspace(WORKSPACE);
  const started = performance.now();
  const run = await ws.kiln([
    'build',
    `${flag}=${server!.url}`,
    `--remote_timeout=${TIMEOUT_S}s`,
    `--remote_retries=${RETRIES}`,
    `--remote_retry_max_delay=${MAX_DELAY_MS}ms`,
    '//:out',
  ]);
  return { code: run.code, stderr: run.stderr, ms: performance.now() - started };
}

describe('kiln build against a hostile REAPI server', () => {
  it('a ByteStream Read that stalls on a cache hit gives up within the bound, and the action runs locally', { timeout: 30_000 }, async () => {
    server = await startHostileReapiServer();
    // Every action is a cache hit whose output is large enough to be streamed, and the stream stalls.
    const output = server.put(Buffer.alloc(4 * 1024 * 1024, 'o'));
    server.script('GetActionResult', () => ({
      kind: 'answer',
      response: { exitCode: 0, outputFiles: [{ path: 'bazel-out/k8-fastbuild/bin/out.txt', digest: output }] },
    }));
    server.script('Read', () => ({ kind: 'stall' }));
    const run = await build('--remote_cache');
    expect(run.stderr).toMatch(new RegExp(`WARNING: .*ByteStream\\.Read of blobs/${output.hash}/${output.sizeBytes} on ${server.url}: DEADLINE_EXCEEDED`));
    expect(run.code).toBe(ExitCode.SUCCESS);
    expect(server.requests.Read.length).toBe(RETRIES + 1);
    expect(run.ms).toBeLessThan(BOUND_MS + MARGIN_MS);
  });

  it('an Execute stream that stalls fails the build within the bound', { timeout: 30_000 }, async () => {
    server = await startHostileReapiServer();
    server.script('Execute', () => ({ kind: 'stall' }));
    const run = await build('--remote_executor');
    expect(run.stderr).toMatch(new RegExp(`Execute on ${server.url}: DEADLINE_EXCEEDED: nothing received for ${TIMEOUT_S * 1000} ms`));
    expect(run.code).toBe(ExitCode.REMOTE_ERROR);
    expect(run.ms).toBeLessThan(BOUND_MS + MARGIN_MS);
  });

  it('RESOURCE_EXHAUSTED asking for an hour is waited for at most --remote_retry_max_delay', { timeout: 30_000 }, async () => {
    server = await startHostileReapiServer();
    server.script('Execute', () => ({ kind: 'fail', code: grpc.status.RESOURCE_EXHAUSTED, retryDelayMs: 3_600_000 }));
    const run = await build('--remote_executor');
    expect(run.stderr).toMatch(new RegExp(`Execute on ${server.url}: RESOURCE_EXHAUSTED`));
    expect(run.code).toBe(ExitCode.REMOTE_ERROR);
    expect(server.requests.Execute).toHaveLength(RETRIES + 1);
    expect(run.ms).toBeLessThan(RETRIES * MAX_DELAY_MS + MARGIN_MS);
  });

  it("a remote action's stdout above the captured-output limit goes to a file; its 8 MiB head is shown", { timeout: 30_000 }, async () => {
    server = await startHostileReapiServer();
    const head = Buffer.alloc(8 * 1024 * 1024, 'h');
    const stdout = server.put(Buffer.concat([head, Buffer.from('TAIL-MARKER'), Buffer.alloc(1024 * 1024, 't')]));
    const response = reapi.ExecuteResponse.encode({ result: { exitCode: 1, stdoutDigest: stdout }, status: { code: 0, message: '' } });
    server.script('Execute', () => ({
      kind: 'operations',
      operations: [
        {
          name: 'operations/big-stdout',
          done: true,
          response: { typeUrl: 'type.googleapis.com/build.bazel.remote.execution.v2.ExecuteResponse', value: response },
        },
      ],
      then: 'end',
    }));
    const run = await build('--remote_executor');
    expect(run.code).toBe(ExitCode.BUILD_FAILURE);
    expect(run.stderr).toContain(head.toString());
    expect(run.stderr).not.toContain('TAIL-MARKER');
    expect(server.requests.Read).toHaveLength(1);
  });
});
