import { digestKey, FailedPreconditionError, InvalidArgumentError, NotFoundError, parseDigest, reapi } from '../src/core/index.js';
import { findMissingReferencedBlobs, type BlobAccess } from '../src/core/blobstore/index.js';
import { unaryHandler, type ServiceContext } from './service-context.js';
import { checkDigestFunction } from './storage-instances.js';

/** build.bazel.remote.execution.v2.ActionCache over each instance's action cache. */
export function actionCacheService(ctx: ServiceContext): reapi.ActionCacheServer {
  return {
    GetActionResult: unaryHandler(
      ctx,
      'GetActionResult',
      () => 0,
      async (request) => {
        checkDigestFunction(request.digestFunction);
        const { cas, actionCache } = ctx.instances.get(request.instanceName);
        const actionDigest = parseDigest(request.actionDigest, 'action_digest');
        // The action cache is completeness-checked: a result whose outputs left the CAS is NOT_FOUND.
        const result = reapi.ActionResult.decode(await actionCache.get(actionDigest));
        await inlineContents(result, request, cas, ctx.config.limits.maxInlineBytes);
        return result;
      },
    ),

    UpdateActionResult: unaryHandler(
      ctx,
      'UpdateActionResult',
      () => 0,
      async (request) => {
        checkDigestFunction(request.digestFunction);
        const { cas, actionCache, checkActionResultReferences } = ctx.instances.get(request.instanceName);
        const actionDigest = parseDigest(request.actionDigest, 'action_digest');
        if (!request.actionResult) throw new InvalidArgumentError('action_result: missing');
        const result = request.actionResult;
        // A storage node holds one shard of the CAS: the server in front of it checked the whole.
        const missing = checkActionResultReferences ? await findMissingReferencedBlobs(result, cas) : [];
        if (missing.length > 0) {
          throw new FailedPreconditionError(
            `action_result: ${missing.length} referenced blobs are not in the CAS (e.g. ${digestKey(missing[0]!)}); upload them first`,
            missing.map((d) => ({ type: 'MISSING', subject: `blobs/${d.hash}/${d.sizeBytes}`, description: 'referenced by the action result' })),
          );
        }
        const data = reapi.ActionResult.encode(result);
        await actionCache.put({ hash: actionDigest.hash, sizeBytes: actionDigest.sizeBytes }, data);
        return reapi.ActionResult.decode(data);
      },
    ),
  };
}

/**
 * Fills stdout_raw, stderr_raw and OutputFile.contents as the request asks, while the total stays
 * within `budget` bytes; what does not fit is left to be fetched by digest (REAPI allows that).
 */
async function inlineContents(result: reapi.ActionResult, request: reapi.GetActionResultRequest, cas: BlobAccess, budget: number): Promise<void> {
  let left = budget;
  const fetch = async (digest: reapi.Digest | null | undefined): Promise<Buffer | undefined> => {
    if (!digest) return undefined;
    const d = parseDigest(digest, 'action result digest');
    if (d.sizeBytes > left) return undefined;
    try {
      const data = await cas.get(d);
      left -= data.length;
      return data;
    } catch (e) {
      if (e instanceof NotFoundError) return undefined;
      throw e;
    }
  };
  if (request.inlineStdout && result.stdoutRaw.length === 0) {
    const data = await fetch(result.stdoutDigest);
    if (data) result.stdoutRaw = data;
  }
  if (request.inlineStderr && result.stderrRaw.length === 0) {
    const data = await fetch(result.stderrDigest);
    if (data) result.stderrRaw = data;
  }
  const wanted = new Set(request.inlineOutputFiles);
  for (const file of result.outputFiles) {
    if (!wanted.has(file.path) || file.contents.length > 0) continue;
    const data = await fetch(file.digest);
    if (data) file.contents = data;
  }
}
