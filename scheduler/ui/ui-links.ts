import type { Digest } from '../../src/core/index.js';

/** How the UI shows a blob: bb-browser's views, under REAPI's resource-name shape `{instance}/blobs/{hash}/{size}/`. */
export type BlobView = 'action' | 'command' | 'directory' | 'tree' | 'file';

/** A path of names, each percent-encoded, so a name with `/`, `?` or `#` stays one segment. */
function segments(names: readonly string[]): string {
  return names.map((n) => encodeURIComponent(n)).join('/');
}

function instancePrefix(instanceName: string): string {
  return instanceName === '' ? '' : `/${segments(instanceName.split('/'))}`;
}

/** `/{instance}/blobs/{hash}/{size}/{view}/{rest...}`; `rest` names a file (download) or a path inside a Tree. */
export function blobUrl(instanceName: string, digest: Digest, view: BlobView, rest: readonly string[] = []): string {
  const tail = rest.length > 0 ? `/${segments(rest)}` : '/';
  return `${instancePrefix(instanceName)}/blobs/${digest.hash}/${digest.sizeBytes}/${view}${view === 'file' ? tail.replace(/\/$/, '') : tail}`;
}

/** An operation's page: its name as the path (`{instance}/operations/{id}`). */
export function operationUrl(name: string): string {
  return `/${segments(name.split('/'))}`;
}

export function invocationUrl(invocationId: string): string {
  return `/invocation/${encodeURIComponent(invocationId)}`;
}

export function searchUrl(digest: string): string {
  return `/search?digest=${encodeURIComponent(digest)}`;
}
