import { html } from '../html.js';
import { page } from '../layout.js';
import type { PageResult, UiContext, UiRequest } from '../ui-context.js';
import { operationTable } from './operation-table.js';

/** The recent operations the scheduler keeps, newest first, narrowed by mnemonic, target, tool or invocation. Live. */
export function operationsPage(ui: UiContext, request: UiRequest): PageResult {
  const q = request.url.searchParams;
  const part = (name: string) => (q.get(name) ?? '').trim().toLowerCase();
  const [mnemonic, target, invocation, worker] = ['mnemonic', 'target', 'invocation', 'worker'].map(part) as [string, string, string, string];
  const has = (value: string, wanted: string) => wanted === '' || value.toLowerCase().includes(wanted);
  const operations =
    ui.scheduler?.history.newestFirst(
      (op) =>
        request.caller.mayRead(op.instanceName) &&
        has(op.metadata.actionMnemonic, mnemonic) &&
        has(op.metadata.targetId, target) &&
        has(op.metadata.invocationId, invocation) &&
        has(op.worker ?? '', worker),
      500,
    ) ?? [];
  const field = (name: string, label: string) => html`<label>${label} <input name="${name}" value="${q.get(name) ?? ''}"></label>`;
  const body = html`<h1>Recent operations</h1>
<form class="filters" method="get">${field('mnemonic', 'mnemonic')}${field('target', 'target')}${field('invocation', 'invocation')}${field('worker', 'worker')}<button>Filter</button></form>
${operationTable(operations)}
<p class="muted">The scheduler keeps the latest ${ui.scheduler?.history.capacity ?? 0} operations (execution.recentOperations).</p>`;
  return { kind: 'html', body: page('Operations', request.caller, body, { liveMs: 2000 }) };
}
