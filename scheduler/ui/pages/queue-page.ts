import { html } from '../html.js';
import { page } from '../layout.js';
import { formatDuration, formatTime } from '../format.js';
import type { PageResult, UiContext, UiRequest } from '../ui-context.js';
import { blobUrl, invocationUrl, operationUrl } from '../ui-links.js';
import { operationTable } from './operation-table.js';
import type { ExecutionSnapshot } from '../../execution/index.js';

/** Executions queued per platform, the executors and what each runs now, the latest operations. Live. */
export function queuePage(ui: UiContext, request: UiRequest): PageResult {
  const caller = request.caller;
  const scheduler = ui.scheduler;
  if (!scheduler) {
    return { kind: 'html', body: page('Queue', caller, html`<h1>Queue and executors</h1><p class="muted">This server runs no scheduler.</p>`) };
  }
  const now = Date.now();
  const execution = (e: ExecutionSnapshot, since: number) =>
    html`<li><a class="mono" href="${blobUrl(e.instanceName, e.actionDigest, 'action')}">${e.actionDigest.hash.slice(0, 12)}</a>
${e.operationNames.map((n) => html` <a class="mono" href="${operationUrl(n)}">op ${n.split('/').at(-1)!.slice(0, 8)}</a>`)}
${e.invocationId ? html` · invocation <a class="mono" href="${invocationUrl(e.invocationId)}">${e.invocationId.slice(0, 8)}</a>` : ''} · ${formatDuration(now - since)}</li>`;
  const queues = [...scheduler.queuedExecutions()].map(([platform, items]) => {
    const visible = items.filter((e) => caller.mayRead(e.instanceName));
    if (visible.length === 0) return html``;
    return html`<tr><td class="mono">${platform || '(empty platform)'}</td><td class="queued-count">${visible.length}</td><td>${formatDuration(now - Math.min(...visible.map((e) => e.queuedAt)))}</td>
<td><ul>${visible.slice(0, 20).map((e) => execution(e, e.queuedAt))}</ul>${visible.length > 20 ? html`<p class="muted">and ${visible.length - 20} more</p>` : ''}</td></tr>`;
  });
  const executors = scheduler
    .executorDetails()
    .filter((e) => caller.mayRead(e.instanceName))
    .map(
      (
        e,
      ) => html`<tr class="executor"><td>${e.name}</td><td>${e.instanceName === '' ? '""' : e.instanceName}</td><td class="mono">${e.properties.map((p) => `${p.name}=${p.value}`).join(', ')}</td>
<td>${e.running} / ${e.slots}${e.slots === 0 ? ' (draining)' : ''}</td><td>${formatTime(e.lastSeen)}</td>
<td>${e.tasks.length > 0 ? html`<ul class="running">${e.tasks.map((t) => execution(t, t.assignedAt ?? t.queuedAt))}</ul>` : html`<span class="muted">idle</span>`}</td></tr>`,
    );
  const recent = scheduler.history.newestFirst((op) => caller.mayRead(op.instanceName), 30);
  const body = html`<h1>Queue and executors</h1>
<h2>Queued, per platform</h2>
<table class="queues"><thead><tr><th>platform</th><th>queued</th><th>oldest waits</th><th>actions</th></tr></thead><tbody>${queues}</tbody></table>
${queues.every((q) => q.text === '') ? html`<p class="muted">Nothing is queued.</p>` : ''}
<h2>Executors</h2>
${executors.length > 0 ? html`<table class="executors"><thead><tr><th>name</th><th>instance</th><th>platform</th><th>running / slots</th><th>last seen</th><th>running now</th></tr></thead><tbody>${executors}</tbody></table>` : html`<p class="muted">No executor is connected.</p>`}
<h2>Recent operations</h2>${operationTable(recent)}<p><a href="/operations">all recent operations</a></p>`;
  return { kind: 'html', body: page('Queue and executors', caller, body, { liveMs: 1000 }) };
}
