import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { digestKey, reapi } from '../../src/core/index.js';
import { needTool } from '../setup/need-tool.js';
import { blob, blobName, connect, grpc, must, randomBytes, readStream, uploadName, uploadRequests, writeStream } from './cache-server-fixture.js';

// `kiln storage` as an operator runs it: the built binary in a process of its own, killed with SIGKILL.
const BINARY = fileURLToPath(new URL('../../bin/kiln', import.meta.url));
const BUILT = existsSync(fileURLToPath(new URL('../../dist/bundle/kiln.js', import.meta.url)));
const haveBuild = needTool('the built kiln (dist/)', BUILT, 'npm run build');

interface NodeProcess {
  readonly endpoint: string;
  readonly port: number;
  kill(): Promise<void>;
}

/** Starts `kiln storage --storage DIR` and resolves once it prints its endpoint. */
async function startNodeProcess(dir: string, port = 0): Promise<NodeProcess> {
  const child: ChildProcess = spawn(BINARY, ['storage', '--storage', dir, '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const endpoint = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
    });
    void exited.then((code) => reject(new Error(`kiln storage exited with ${code}: ${stderr}`)));
  });
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  onTestFinished(kill);
  return { endpoint, port: Number(endpoint.slice(endpoint.lastIndexOf(':') + 1)), kill };
}

describe.skipIf(!haveBuild)('kiln storage killed with SIGKILL', () => {
  it('loses no committed blob or action result, and shows no upload the kill cut short', { timeout: 60_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kiln-storage-kill-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const first = await startNodeProcess(dir);
    const small = Array.from({ length: 50 }, (_, i) => blob(`blob ${i} of the killed node`));
    const large = blob(randomBytes(5 * 1024 * 1024, 3));
    const cut = blob(randomBytes(3 * 1024 * 1024, 4));
    const action = blob(reapi.Action.encode({ salt: Buffer.from('killed') }));
    const before = connect(first.endpoint);
    await must(before.cas, before.cas.BatchUpdateBlobs, { requests: small.map((b) => ({ digest: b.digest, data: b.data })) });
    expect(await writeStream(before.bs, uploadRequests(uploadName(large.digest), large.data, 256 * 1024))).toMatchObject({ ok: true });
    await must(before.ac, before.ac.UpdateActionResult, {
      actionDigest: action.digest,
      actionResult: { outputFiles: [{ path: 'out', digest: large.digest }] },
    });
    // An upload in flight when the node dies: half its bytes sent, never finished.
    const pending = before.bs.Write(() => undefined);
    for (const r of uploadRequests(uploadName(cut.digest), cut.data, 256 * 1024).slice(0, 6)) pending.write(r);
    await first.kill();
    before.close();

    const second = await startNodeProcess(dir, first.port);
    const after = connect(second.endpoint);
    try {
      const missing = await must(after.cas, after.cas.FindMissingBlobs, { blobDigests: [...small, large, cut].map((b) => b.digest) });
      expect(missing.missingBlobDigests.map(digestKey)).toEqual([digestKey(cut.digest)]);
      const read = await must(after.cas, after.cas.BatchReadBlobs, { digests: small.map((b) => b.digest) });
      expect(read.responses.every((r, i) => r.status?.code === grpc.status.OK && r.data.equals(small[i]!.data))).toBe(true);
      const big = await readStream(after.bs, { resourceName: blobName(large.digest) });
      expect(big.ok && big.value.equals(large.data)).toBe(true);
      expect((await must(after.ac, after.ac.GetActionResult, { actionDigest: action.digest })).outputFiles[0]!.path).toBe('out');
    } finally {
      after.close();
    }
  });
});
