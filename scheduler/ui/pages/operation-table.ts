import { googleRpc } from '../../../src/core/index.js';
import type { RecordedOperation } from '../../execution/index.js';
import { html, type Html } from '../html.js';
import { statusBadge } from '../layout.js';
import { formatDuration, formatTime } from '../format.js';
import { blobUrl, invocationUrl, operationUrl } from '../ui-links.js';

/** An operation's outcome in a word: its stage until done, then cached / exit code / the status code. */
export function operationBadge(op: RecordedOperation): Html {
  if (op.stage !== 'COMPLETED') return statusBadge(op.stage.toLowerCase(), 'run');
  if (op.status && op.status.code !== googleRpc.Code.OK) return statusBadge(googleRpc.Code[op.status.code] ?? String(op.status.code), 'bad');
  if (op.cachedResult) return statusBadge('cached', 'ok');
  const exit = op.result?.exitCode ?? 0;
  return statusBadge(`exit ${exit}`, exit === 0 ? 'ok' : 'bad');
}

/** The table of operations that the queue, operations, action and invocation pages share. */
export function operationTable(operations: readonly RecordedOperation[], options: { readonly showInvocation?: boolean } = {}): Html {
  if (operations.length === 0) return html`<p class="muted">No operations.</p>`;
  const showInvocation = options.showInvocation ?? true;
  const rows = operations.map(
    (op) => html`<tr>
<td><a href="${operationUrl(op.name)}" class="mono">${op.name.split('/').at(-1)!.slice(0, 8)}</a></td>
<td>${operationBadge(op)}</td>
<td>${op.metadata.actionMnemonic}</td><td class="mono">${op.metadata.targetId}</td>
<td><a href="${blobUrl(op.instanceName, op.actionDigest, 'action')}" class="mono">${op.actionDigest.hash.slice(0, 12)}</a></td>
<td>${op.worker ?? ''}</td>
<td>${formatTime(op.createdMs)}</td>
<td>${formatDuration(op.completedMs === undefined ? undefined : op.completedMs - op.createdMs)}</td>
${showInvocation ? html`<td>${op.metadata.invocationId ? html`<a href="${invocationUrl(op.metadata.invocationId)}" class="mono">${op.metadata.invocationId.slice(0, 8)}</a>` : ''}</td>` : ''}
</tr>`,
  );
  return html`<table class="operations"><thead><tr><th>operation</th><th>outcome</th><th>mnemonic</th><th>target</th><th>action</th><th>worker</th><th>started</th><th>took</th>${showInvocation ? html`<th>invocation</th>` : ''}</tr></thead>
<tbody>${rows}</tbody></table>`;
}
