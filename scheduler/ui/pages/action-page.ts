import { msFromDuration, NotFoundError, reapi, type Digest } from '../../../src/core/index.js';
import { html, type Html } from '../html.js';
import { page } from '../layout.js';
import { formatDuration } from '../format.js';
import { reproduceCommands } from '../reproduce-commands.js';
import { readMessage, type PageResult, type UiContext, type UiRequest } from '../ui-context.js';
import { blobUrl } from '../ui-links.js';
import { actionResultSection } from './action-result-section.js';
import { commandSection } from './command-section.js';
import { operationTable } from './operation-table.js';

async function cachedResult(ui: UiContext, instanceName: string, digest: Digest): Promise<reapi.ActionResult | undefined> {
  try {
    return reapi.ActionResult.decode(await ui.server.instances.get(instanceName).actionCache.get(digest));
  } catch (e) {
    if (e instanceof NotFoundError) return undefined;
    throw e;
  }
}

/**
 * An Action (bb-browser's `/action/`): its Command, input root, platform and timeout; its result (the
 * action cache's, else the latest operation's); the operations that ran it, with their invocations;
 * a rerun button for admins; command lines that reproduce it.
 */
export async function actionPage(ui: UiContext, request: UiRequest, instanceName: string, digest: Digest): Promise<PageResult> {
  const caller = request.caller;
  const action = await readMessage(ui, caller, instanceName, digest, reapi.Action, 'the Action');
  const commandDigest = { hash: action.commandDigest?.hash ?? '', sizeBytes: Number(action.commandDigest?.sizeBytes ?? 0) };
  const inputRoot = { hash: action.inputRootDigest?.hash ?? '', sizeBytes: Number(action.inputRootDigest?.sizeBytes ?? 0) };
  let command: reapi.Command | undefined;
  try {
    command = await readMessage(ui, caller, instanceName, commandDigest, reapi.Command, 'the Command');
  } catch {
    command = undefined;
  }
  const operations =
    ui.scheduler?.history.newestFirst(
      (op) => op.instanceName === instanceName && op.actionDigest.hash === digest.hash && op.actionDigest.sizeBytes === digest.sizeBytes,
    ) ?? [];
  const fromCache = await cachedResult(ui, instanceName, digest);
  const latest = operations.find((op) => op.result)?.result;
  const result = fromCache ?? latest;
  const resultHtml = result
    ? html`<p class="muted">${fromCache ? 'From the action cache.' : 'From the latest operation (not in the action cache).'}</p>${await actionResultSection(ui, caller, instanceName, result)}`
    : html`<p class="muted">No result: not in the action cache, and no recent operation ran it.</p>`;
  const metadata = operations.find((op) => op.metadata.targetId !== '')?.metadata ?? operations[0]?.metadata;
  const rerun: Html | string =
    ui.scheduler && caller.mayAdminister(instanceName)
      ? html`<form method="post" class="rerun"><input type="hidden" name="form_token" value="${caller.formToken}"><button name="rerun" value="1">Rerun on the cluster</button> <span class="muted">(skips the action cache)</span></form>`
      : '';
  const reproduce = command
    ? html`<h2>Reproduce</h2>${reproduceCommands(ui.endpoint, instanceName, command, metadata).map((c) => html`<p>${c.what}:</p><pre class="reproduce">${c.line}</pre>`)}`
    : '';
  const timeout = action.timeout ? formatDuration(msFromDuration(action.timeout)) : '(the scheduler default)';
  const body = html`<h1>Action <span class="mono">${digest.hash}/${digest.sizeBytes}</span></h1>
${rerun}
<dl>
<dt>instance</dt><dd>${instanceName === '' ? '"" (default)' : instanceName}</dd>
<dt>command</dt><dd><a class="mono" href="${blobUrl(instanceName, commandDigest, 'command')}">${commandDigest.hash}/${commandDigest.sizeBytes}</a></dd>
<dt>input root</dt><dd><a class="input-root mono" href="${blobUrl(instanceName, inputRoot, 'directory')}">${inputRoot.hash}/${inputRoot.sizeBytes}</a></dd>
<dt>platform</dt><dd class="mono">${(action.platform?.properties ?? command?.platform?.properties ?? []).map((p) => `${p.name}=${p.value}`).join(', ')}</dd>
<dt>timeout</dt><dd>${timeout}</dd>
<dt>do not cache</dt><dd>${action.doNotCache ? 'yes' : 'no'}</dd>
${metadata ? html`<dt>mnemonic</dt><dd>${metadata.actionMnemonic}</dd><dt>target</dt><dd class="mono">${metadata.targetId}</dd>` : ''}
</dl>
<h2>Command</h2>${command ? commandSection(command) : html`<p class="error">The Command is not in the CAS.</p>`}
<h2>Result</h2>${resultHtml}
<h2>Operations</h2>${operationTable(operations)}
${reproduce}`;
  return { kind: 'html', body: page(`Action ${digest.hash.slice(0, 12)}`, caller, body) };
}
