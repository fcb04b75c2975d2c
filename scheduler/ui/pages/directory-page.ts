import { reapi, type Digest } from '../../../src/core/index.js';
import { html } from '../html.js';
import { page } from '../layout.js';
import { readMessage, type PageResult, type UiContext, type UiRequest } from '../ui-context.js';
import { blobUrl } from '../ui-links.js';
import { digestOf, directoryListing } from './directory-listing.js';

/** A Directory blob (an input root, bb-browser's `/directory/`), each subdirectory its own page. */
export async function directoryPage(ui: UiContext, request: UiRequest, instanceName: string, digest: Digest): Promise<PageResult> {
  const directory = await readMessage(ui, request.caller, instanceName, digest, reapi.Directory, 'the Directory');
  const body = html`<h1>Directory <span class="mono">${digest.hash}/${digest.sizeBytes}</span></h1>
${directoryListing(instanceName, directory, (node) => blobUrl(instanceName, digestOf(node.digest), 'directory'))}`;
  return { kind: 'html', body: page('Directory', request.caller, body) };
}
