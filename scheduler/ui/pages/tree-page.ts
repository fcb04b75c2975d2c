import { digestKey, digestOf as digestOfBytes, reapi, type Digest } from '../../../src/core/index.js';
import { html } from '../html.js';
import { page } from '../layout.js';
import { notFound, readMessage, type PageResult, type UiContext, type UiRequest } from '../ui-context.js';
import { blobUrl } from '../ui-links.js';
import { digestOf, directoryListing } from './directory-listing.js';

/**
 * A Tree blob (an output directory, bb-browser's `/tree/`): the path after the view walks from its
 * root through subdirectory names; each child Directory is found by the digest of its encoding, as a
 * DirectoryNode names it.
 */
export async function treePage(ui: UiContext, request: UiRequest, instanceName: string, digest: Digest, path: readonly string[]): Promise<PageResult> {
  const tree = await readMessage(ui, request.caller, instanceName, digest, reapi.Tree, 'the Tree');
  const children = new Map<string, reapi.Directory>();
  for (const child of tree.children) children.set(digestKey(digestOfBytes(reapi.Directory.encode(child))), child);
  let directory = tree.root ?? reapi.Directory.decode(Buffer.alloc(0));
  for (const name of path) {
    const node = directory.directories.find((d) => d.name === name);
    const next = node ? children.get(digestKey(digestOf(node.digest))) : undefined;
    if (!next) throw notFound(`${path.join('/').slice(0, 200)} in the Tree`);
    directory = next;
  }
  const crumbs = [
    html`<a href="${blobUrl(instanceName, digest, 'tree')}">(root)</a>`,
    ...path.map((name, i) => html` / <a href="${blobUrl(instanceName, digest, 'tree', path.slice(0, i + 1))}/">${name}</a>`),
  ];
  const body = html`<h1>Tree <span class="mono">${digest.hash}/${digest.sizeBytes}</span></h1>
<p class="crumbs mono">${crumbs}</p>
${directoryListing(instanceName, directory, (node) => `${blobUrl(instanceName, digest, 'tree', [...path, node.name])}/`)}`;
  return { kind: 'html', body: page('Tree', request.caller, body) };
}
