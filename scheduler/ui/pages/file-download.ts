import { isEmptyDigest, NotFoundError, type Digest } from '../../../src/core/index.js';
import { notFound, readableInstance, type PageResult, type UiContext, type UiRequest } from '../ui-context.js';

/** `attachment; filename*=UTF-8''...`: the name as RFC 6266 quotes it, whatever it holds. */
function disposition(kind: 'attachment' | 'inline', name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/**
 * A file blob's bytes, streamed from the CAS (bb-browser's `/file/NAME`): a download named NAME, or
 * with `?inline=1` shown as plain text (logs). Never as HTML, so a file cannot script the UI.
 */
export async function fileDownload(ui: UiContext, request: UiRequest, instanceName: string, digest: Digest, rest: readonly string[]): Promise<PageResult> {
  const instance = readableInstance(ui, request.caller, instanceName, 'the file');
  const name = rest.at(-1) || digest.hash;
  const inline = request.url.searchParams.get('inline') === '1';
  const contentType = inline ? 'text/plain; charset=utf-8' : 'application/octet-stream';
  if (isEmptyDigest(digest))
    return { kind: 'blob', contentType, disposition: disposition(inline ? 'inline' : 'attachment', name), sizeBytes: 0, chunks: (async function* () {})() };
  try {
    const read = await instance.cas.read(digest);
    return { kind: 'blob', contentType, disposition: disposition(inline ? 'inline' : 'attachment', name), sizeBytes: read.sizeBytes, chunks: read.chunks };
  } catch (e) {
    if (e instanceof NotFoundError) throw notFound('the file');
    throw e;
  }
}
