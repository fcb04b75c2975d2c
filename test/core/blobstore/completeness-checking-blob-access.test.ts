import { describe, expect, it } from 'vitest';
import { encodeMessage, NotFoundError, reapi, type Digest, type MessageCodec } from '../../../src/core/index.js';
import {
  CompletenessCheckingBlobAccess,
  findMissingReferencedBlobs,
  MemoryBlobAccess,
  VerifyingBlobAccess,
  type BlobAccess,
} from '../../../src/core/blobstore/index.js';
import { blob, RecordingLogger } from './fixtures.js';

async function store(cas: BlobAccess, content: string | Buffer): Promise<Digest> {
  const b = blob(content);
  await cas.put(b.digest, b.data);
  return b.digest;
}

async function storeMessage<T, I>(cas: BlobAccess, codec: MessageCodec<T, I>, message: I): Promise<Digest> {
  const { digest, data } = encodeMessage(codec, message);
  await cas.put(digest, data);
  return digest;
}

/** A CAS holding a realistic action's outputs, and the ActionResult that refers to them. */
async function scenario() {
  const cas = new VerifyingBlobAccess(new MemoryBlobAccess({ maxBytes: 1 << 20 }));
  const logger = new RecordingLogger();
  const acBackend = new MemoryBlobAccess({ maxBytes: 1 << 20 });
  const ac = new CompletenessCheckingBlobAccess(acBackend, { contentAddressableStorage: cas, logger });

  const outFile = await store(cas, 'output file');
  const stdout = await store(cas, 'stdout text');
  const stderr = await store(cas, 'stderr text');
  const inTree = await store(cas, 'file inside the output tree');
  const deepInTree = await store(cas, 'file in a subdirectory of the tree');
  const sub: reapi.DirectoryInit = { files: [{ name: 'deep.txt', digest: deepInTree }] };
  const subDigest = encodeMessage(reapi.Directory, sub).digest;
  const tree = await storeMessage(cas, reapi.Tree, {
    root: { files: [{ name: 'a.txt', digest: inTree }], directories: [{ name: 'sub', digest: subDigest }] },
    children: [sub],
  });
  // An output directory in DIRECTORY_ONLY form: a root Directory whose children live in the CAS.
  const leaf = await store(cas, 'leaf of a directory-only output');
  const childDir = await storeMessage(cas, reapi.Directory, { files: [{ name: 'leaf', digest: leaf }] });
  const rootDir = await storeMessage(cas, reapi.Directory, { directories: [{ name: 'child', digest: childDir }] });

  const result: reapi.ActionResultInit = {
    outputFiles: [{ path: 'out.txt', digest: outFile }],
    outputDirectories: [
      { path: 'tree_out', treeDigest: tree },
      { path: 'dir_out', rootDirectoryDigest: rootDir },
    ],
    exitCode: 0,
    stdoutDigest: stdout,
    stderrDigest: stderr,
  };
  const actionDigest = blob('the action').digest;
  await ac.put(actionDigest, reapi.ActionResult.encode(result));
  return { cas, ac, acBackend, logger, actionDigest, digests: { outFile, stdout, stderr, inTree, deepInTree, tree, leaf, childDir, rootDir } };
}

describe('CompletenessCheckingBlobAccess', () => {
  it('serves a result whose outputs are all in the CAS', async () => {
    const { ac, actionDigest } = await scenario();
    const result = reapi.ActionResult.decode(await ac.get(actionDigest));
    expect(result.outputFiles[0]?.path).toBe('out.txt');
  });

  it.each(['outFile', 'stdout', 'stderr', 'inTree', 'deepInTree', 'tree', 'leaf', 'childDir', 'rootDir'] as const)(
    'turns the result into a miss when %s is no longer in the CAS',
    async (name) => {
      const { cas, ac, acBackend, actionDigest, digests } = await scenario();
      await cas.delete(digests[name]);
      await expect(ac.get(actionDigest)).rejects.toBeInstanceOf(NotFoundError);
      await expect(ac.read(actionDigest)).rejects.toThrow(/no longer in the CAS/);
      expect(await findMissingReferencedBlobs(reapi.ActionResult.decode(await acBackend.get(actionDigest)), cas)).toContainEqual(digests[name]);
    },
  );

  it('lists exactly the missing blobs', async () => {
    const { cas, digests } = await scenario();
    await cas.delete(digests.stdout);
    await cas.delete(digests.deepInTree);
    const result = reapi.ActionResult.create({
      outputFiles: [{ path: 'o', digest: digests.outFile }],
      stdoutDigest: digests.stdout,
      outputDirectories: [{ path: 't', treeDigest: digests.tree }],
    });
    expect(await findMissingReferencedBlobs(result, cas)).toEqual([digests.stdout, digests.deepInTree]);
  });

  it('treats malformed digests inside a result as missing', async () => {
    const { cas } = await scenario();
    const result = reapi.ActionResult.create({ outputFiles: [{ path: 'o', digest: { hash: 'nothex', sizeBytes: 1 } }] });
    expect(await findMissingReferencedBlobs(result, cas)).toEqual([{ hash: 'nothex', sizeBytes: 1 }]);
  });

  it('treats an unreadable action cache entry as a miss and logs it', async () => {
    const { ac, logger } = await scenario();
    const key = blob('another action').digest;
    await ac.put(key, Buffer.from([0x0a, 0xff, 0xff, 0xff]));
    await expect(ac.get(key)).rejects.toBeInstanceOf(NotFoundError);
    expect(logger.warnings[0]).toMatch(/not a valid ActionResult/);
  });

  it('is NOT_FOUND for an action never cached', async () => {
    const { ac } = await scenario();
    await expect(ac.get(blob('unknown action').digest)).rejects.toBeInstanceOf(NotFoundError);
  });
});
