import { googleRpc, reapi } from '../../../src/core/index.js';
import { html } from '../html.js';
import { page } from '../layout.js';
import { formatDuration, formatTime } from '../format.js';
import { notFound, readMessage, type PageResult, type UiContext, type UiRequest } from '../ui-context.js';
import { blobUrl, invocationUrl } from '../ui-links.js';
import { actionResultSection } from './action-result-section.js';
import { operationBadge } from './operation-table.js';

/** One operation (an Execute call): its action, the client's request metadata, stages, worker and result. Live until done. */
export async function operationPage(ui: UiContext, request: UiRequest, name: string): Promise<PageResult> {
  const op = ui.scheduler?.history.get(name);
  if (!op || !request.caller.mayRead(op.instanceName)) throw notFound(`operation ${name.slice(0, 120)}`);
  const m = op.metadata;
  const since = (ms: number | undefined) => (ms === undefined ? '' : `+${formatDuration(ms - op.createdMs)} after receipt`);
  const status =
    op.status && op.status.code !== googleRpc.Code.OK
      ? html`<dt>status</dt><dd class="error">${googleRpc.Code[op.status.code] ?? op.status.code}: ${op.status.message}</dd>`
      : '';
  // The Action and its Command, as the CAS holds them (gone once evicted: the action page says so).
  const action = await readMessage(ui, request.caller, op.instanceName, op.actionDigest, reapi.Action, 'the Action').catch(() => undefined);
  const commandDigest = action?.commandDigest ? { hash: action.commandDigest.hash, sizeBytes: Number(action.commandDigest.sizeBytes) } : undefined;
  const command = commandDigest
    ? await readMessage(ui, request.caller, op.instanceName, commandDigest, reapi.Command, 'the Command').catch(() => undefined)
    : undefined;
  const inputRoot = action?.inputRootDigest ? { hash: action.inputRootDigest.hash, sizeBytes: Number(action.inputRootDigest.sizeBytes) } : undefined;
  const result = op.result ? await actionResultSection(ui, request.caller, op.instanceName, op.result) : html`<p class="muted">No result yet.</p>`;
  const body = html`<h1>Operation <span class="mono">${op.name}</span> ${operationBadge(op)}</h1>
<dl>
<dt>action</dt><dd><a class="action-link mono" href="${blobUrl(op.instanceName, op.actionDigest, 'action')}">${op.actionDigest.hash}/${op.actionDigest.sizeBytes}</a></dd>
<dt>command</dt><dd class="mono command">${command ? command.arguments.join(' ').slice(0, 2000) : html`<span class="muted">not in the CAS</span>`}</dd>
<dt>input root</dt><dd>${inputRoot ? html`<a class="mono" href="${blobUrl(op.instanceName, inputRoot, 'directory')}">${inputRoot.hash}/${inputRoot.sizeBytes}</a>` : ''}</dd>
<dt>instance</dt><dd>${op.instanceName === '' ? '"" (default)' : op.instanceName}</dd>
<dt>invocation</dt><dd>${m.invocationId ? html`<a class="invocation-link mono" href="${invocationUrl(m.invocationId)}">${m.invocationId}</a>` : html`<span class="muted">the client sent no tool_invocation_id</span>`}</dd>
<dt>tool</dt><dd>${m.toolName} ${m.toolVersion}</dd>
<dt>mnemonic</dt><dd>${m.actionMnemonic}</dd>
<dt>target</dt><dd class="mono">${m.targetId}</dd>
<dt>configuration</dt><dd class="mono">${m.configurationId}</dd>
<dt>correlated invocations</dt><dd class="mono">${m.correlatedInvocationsId}</dd>
<dt>platform</dt><dd class="mono">${(op.platform ?? []).map((p) => `${p.name}=${p.value}`).join(', ')}</dd>
<dt>worker</dt><dd class="worker">${op.worker ?? ''}</dd>
<dt>received</dt><dd>${formatTime(op.createdMs)}</dd>
<dt>queued</dt><dd>${since(op.queuedMs)}</dd>
<dt>started</dt><dd>${since(op.startedMs)}</dd>
<dt>completed</dt><dd>${since(op.completedMs)}</dd>
<dt>cached result</dt><dd>${op.cachedResult ? 'yes' : 'no'}</dd>
${status}
</dl>
<h2>Result</h2>${result}`;
  return { kind: 'html', body: page(`Operation ${op.name}`, request.caller, body, op.stage === 'COMPLETED' ? {} : { liveMs: 1000 }) };
}
