import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestOf, reapi } from '../../src/core/index.js';
import { blob, call, grpc, must, preconditionFailure, startTestServer, type TestServer } from './cache-server-fixture.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ config: { limits: { maxInlineBytes: 100 } } });
});
afterAll(() => t.stop());

const actionDigest = (tag: string) => digestOf(reapi.Action.encode({ commandDigest: blob(`command ${tag}`).digest }));

describe('ActionCache', () => {
  it('GetActionResult of an unknown action is NOT_FOUND', async () => {
    const outcome = await call(t.ac, t.ac.GetActionResult, { actionDigest: actionDigest('unknown') });
    expect(outcome).toMatchObject({ ok: false, code: grpc.status.NOT_FOUND });
  });

  it('UpdateActionResult refuses results whose blobs are not in the CAS, naming each as a MISSING violation', async () => {
    const out = blob('output file content');
    const stderr = blob('some stderr');
    const outcome = await call(t.ac, t.ac.UpdateActionResult, {
      actionDigest: actionDigest('missing'),
      actionResult: { outputFiles: [{ path: 'out/a', digest: out.digest }], stderrDigest: stderr.digest, exitCode: 0 },
    });
    expect(outcome).toMatchObject({ ok: false, code: grpc.status.FAILED_PRECONDITION });
    if (outcome.ok) return;
    const violations = preconditionFailure(outcome.metadata)?.violations ?? [];
    expect(violations.map((v) => [v.type, v.subject]).sort()).toEqual(
      [
        ['MISSING', `blobs/${out.digest.hash}/${out.digest.sizeBytes}`],
        ['MISSING', `blobs/${stderr.digest.hash}/${stderr.digest.sizeBytes}`],
      ].sort(),
    );
    expect((await call(t.ac, t.ac.GetActionResult, { actionDigest: actionDigest('missing') })).ok).toBe(false);
  });

  it('stores a complete result, returns it, and serves it with inline contents within the budget', async () => {
    const out = blob('small output');
    const big = blob(Buffer.alloc(500, 'b'));
    const stdout = blob('hello stdout');
    await must(t.cas, t.cas.BatchUpdateBlobs, { requests: [out, big, stdout].map((b) => ({ digest: b.digest, data: b.data })) });
    const result: reapi.ActionResultInit = {
      outputFiles: [
        { path: 'out/small', digest: out.digest },
        { path: 'out/big', digest: big.digest, isExecutable: true },
      ],
      stdoutDigest: stdout.digest,
      exitCode: 3,
    };
    const stored = await must(t.ac, t.ac.UpdateActionResult, { actionDigest: actionDigest('complete'), actionResult: result });
    expect(stored.exitCode).toBe(3);
    expect(stored.outputFiles.map((f) => f.path)).toEqual(['out/small', 'out/big']);

    const plain = await must(t.ac, t.ac.GetActionResult, { actionDigest: actionDigest('complete') });
    expect(plain.stdoutRaw.length).toBe(0);
    expect(plain.outputFiles[0]!.contents.length).toBe(0);

    const inlined = await must(t.ac, t.ac.GetActionResult, {
      actionDigest: actionDigest('complete'),
      inlineStdout: true,
      inlineOutputFiles: ['out/small', 'out/big'],
    });
    expect(inlined.stdoutRaw.toString()).toBe('hello stdout');
    expect(inlined.outputFiles[0]!.contents.toString()).toBe('small output');
    // 500 bytes do not fit the 100-byte budget: left to be fetched by digest.
    expect(inlined.outputFiles[1]!.contents.length).toBe(0);
    expect(inlined.outputFiles[1]!.digest).toMatchObject({ hash: big.digest.hash });
  });

  it('a result whose outputs left the CAS is a miss, not a hit that fails later', async () => {
    const out = blob('soon evicted');
    await must(t.cas, t.cas.BatchUpdateBlobs, { requests: [{ digest: out.digest, data: out.data }] });
    await must(t.ac, t.ac.UpdateActionResult, {
      actionDigest: actionDigest('evicted'),
      actionResult: { outputFiles: [{ path: 'x', digest: out.digest }] },
    });
    expect((await call(t.ac, t.ac.GetActionResult, { actionDigest: actionDigest('evicted') })).ok).toBe(true);
    await t.server.context.instances.get('').cas.delete(out.digest);
    const outcome = await call(t.ac, t.ac.GetActionResult, { actionDigest: actionDigest('evicted') });
    expect(outcome).toMatchObject({ ok: false, code: grpc.status.NOT_FOUND });
  });

  it('rejects a malformed action digest and a missing action_result with INVALID_ARGUMENT', async () => {
    const bad = await call(t.ac, t.ac.GetActionResult, { actionDigest: { hash: 'short', sizeBytes: 1 } });
    expect(bad).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
    if (!bad.ok) expect(bad.message).toContain('action_digest');
    const none = await call(t.ac, t.ac.UpdateActionResult, { actionDigest: actionDigest('none') });
    expect(none).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
    const reserved = await call(t.ac, t.ac.GetActionResult, { instanceName: 'actionResults', actionDigest: actionDigest('x') });
    expect(reserved).toMatchObject({ ok: false, code: grpc.status.INVALID_ARGUMENT });
  });
});
