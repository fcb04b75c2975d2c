import { reapi, type Digest } from '../../../src/core/index.js';
import { html } from '../html.js';
import { page } from '../layout.js';
import { readMessage, type PageResult, type UiContext, type UiRequest } from '../ui-context.js';
import { commandSection } from './command-section.js';

/** A Command blob on its own (bb-browser's `/command/`). */
export async function commandPage(ui: UiContext, request: UiRequest, instanceName: string, digest: Digest): Promise<PageResult> {
  const command = await readMessage(ui, request.caller, instanceName, digest, reapi.Command, 'the Command');
  const body = html`<h1>Command <span class="mono">${digest.hash}/${digest.sizeBytes}</span></h1>${commandSection(command)}`;
  return { kind: 'html', body: page('Command', request.caller, body) };
}
