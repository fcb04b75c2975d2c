import { InvalidArgumentError, parseDigestParts, type Digest } from '../../src/core/index.js';
import type { BlobView } from './ui-links.js';

/** A request path the router understands beyond its fixed pages. */
export type UiPath =
  | { readonly kind: 'blob'; readonly instanceName: string; readonly digest: Digest; readonly view: BlobView; readonly rest: readonly string[] }
  | { readonly kind: 'operation'; readonly name: string }
  | { readonly kind: 'page'; readonly segments: readonly string[] };

const VIEWS: readonly BlobView[] = ['action', 'command', 'directory', 'tree', 'file'];

/**
 * Reads a path: one with a `blobs` segment is a blob (everything before it the instance, as in
 * REAPI's resource names: `blobs` is reserved in instance names), one ending in `operations/{id}` an
 * operation, any other a fixed page.
 * @throws InvalidArgumentError for a blob path whose digest or view is malformed, or bad percent-encoding
 */
export function parseUiPath(pathname: string): UiPath {
  let names: string[];
  try {
    names = pathname
      .split('/')
      .filter((s, i, all) => s !== '' || (i > 0 && i < all.length - 1))
      .map((s) => decodeURIComponent(s));
  } catch {
    throw new InvalidArgumentError('the path is not valid percent-encoding');
  }
  const blobs = names.indexOf('blobs');
  if (blobs >= 0) {
    const [hash = '', size = '', view = '', ...rest] = names.slice(blobs + 1);
    const digest = parseDigestParts(hash, size, 'path');
    if (!VIEWS.includes(view as BlobView))
      throw new InvalidArgumentError(`path: expected one of ${VIEWS.join(', ')} after the digest, got ${JSON.stringify(view.slice(0, 40))}`);
    return { kind: 'blob', instanceName: names.slice(0, blobs).join('/'), digest, view: view as BlobView, rest };
  }
  if (names.length >= 2 && names.at(-2) === 'operations') return { kind: 'operation', name: names.join('/') };
  return { kind: 'page', segments: names };
}
