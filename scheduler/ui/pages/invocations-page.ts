import type { InvocationFilter, InvocationStatus, InvocationSummary } from '../../build-events/index.js';
import { html } from '../html.js';
import { page, statusBadge } from '../layout.js';
import { formatDuration, formatTime } from '../format.js';
import type { PageResult, UiContext, UiRequest } from '../ui-context.js';
import { invocationUrl } from '../ui-links.js';

const STATUSES: readonly InvocationStatus[] = ['running', 'succeeded', 'failed', 'partial'];

export function invocationBadge(status: InvocationStatus) {
  return statusBadge(status, status === 'succeeded' ? 'ok' : status === 'failed' ? 'bad' : status === 'running' ? 'run' : 'warn');
}

/** The invocations the caller may see, newest first, searched by user, host, pattern, command and status. Live. */
export function invocationsPage(ui: UiContext, request: UiRequest): PageResult {
  const q = request.url.searchParams;
  const text = (name: string) => {
    const v = (q.get(name) ?? '').trim();
    return v === '' ? undefined : v;
  };
  const status = q.get('status') ?? '';
  const filter: InvocationFilter = {
    ...(text('user') ? { user: text('user')! } : {}),
    ...(text('host') ? { host: text('host')! } : {}),
    ...(text('pattern') ? { pattern: text('pattern')! } : {}),
    ...(text('command') ? { command: text('command')! } : {}),
    ...(STATUSES.includes(status as InvocationStatus) ? { status: status as InvocationStatus } : {}),
    limit: 200,
  };
  const invocations: InvocationSummary[] = ui.buildEvents?.list(request.caller, filter) ?? [];
  const field = (name: string) => html`<label>${name} <input name="${name}" value="${q.get(name) ?? ''}"></label>`;
  const rows = invocations.map(
    (
      i,
    ) => html`<tr class="invocation"><td><a class="mono" href="${invocationUrl(i.invocationId)}">${i.invocationId.slice(0, 8)}</a></td><td>${invocationBadge(i.status)}</td>
<td>${i.command}</td><td class="mono">${i.patterns.join(' ')}</td><td>${i.user}</td><td>${i.host}</td><td>${i.buildToolVersion}</td>
<td>${formatTime(i.startTimeMs)}</td><td>${formatDuration(i.finishTimeMs === undefined ? undefined : i.finishTimeMs - i.startTimeMs)}</td><td>${i.targetCount}</td></tr>`,
  );
  const body = html`<h1>Invocations</h1>
<form class="filters" method="get">${field('user')}${field('host')}${field('pattern')}${field('command')}
<label>status <select name="status"><option value="">any</option>${STATUSES.map((s) => html`<option${s === status ? html` selected` : ''}>${s}</option>`)}</select></label><button>Search</button></form>
${
  ui.buildEvents
    ? rows.length > 0
      ? html`<table class="invocations"><thead><tr><th>invocation</th><th>status</th><th>command</th><th>patterns</th><th>user</th><th>host</th><th>tool</th><th>started</th><th>took</th><th>targets</th></tr></thead><tbody>${rows}</tbody></table>`
      : html`<p class="muted">No invocation matches.</p>`
    : html`<p class="muted">This server keeps no build events (config "buildEvents"). Builds publish with --bes_backend=${ui.endpoint}.</p>`
}`;
  return { kind: 'html', body: page('Invocations', request.caller, body, { liveMs: 2000 }) };
}
