import { html, type Html } from '../html.js';
import { page, statusBadge } from '../layout.js';
import { formatDuration, formatTime } from '../format.js';
import { bytestreamBlob, invocationReport, type TestAttempt } from '../invocation-report.js';
import { notFound, readText, type PageResult, type UiContext, type UiRequest } from '../ui-context.js';
import type { UiCaller } from '../ui-caller.js';
import { blobUrl } from '../ui-links.js';
import { invocationBadge } from './invocations-page.js';
import { operationTable } from './operation-table.js';
import type { RecordedOperation } from '../../execution/index.js';

/** A test attempt's outputs: links to the blobs Bazel uploaded, and test.log inline (64 KiB). */
async function testOutputs(ui: UiContext, caller: UiCaller, test: TestAttempt): Promise<Html> {
  const parts: Html[] = [];
  for (const output of test.outputs) {
    const blob = bytestreamBlob(output.uri);
    if (!blob) {
      parts.push(html`<div class="mono">${output.name}: ${output.uri}</div>`);
      continue;
    }
    const digest = { hash: blob.hash, sizeBytes: blob.sizeBytes };
    parts.push(html`<div><a class="test-output" href="${blobUrl(blob.instanceName, digest, 'file', [output.name])}?inline=1">${output.name}</a></div>`);
    if (output.name === 'test.log') {
      const text = await readText(ui, caller, blob.instanceName, digest);
      if (text) parts.push(html`<pre class="test-log">${text.text}</pre>`);
    }
  }
  return html`${parts}`;
}

function cacheHitRate(operations: readonly RecordedOperation[]): Html {
  const done = operations.filter((op) => op.stage === 'COMPLETED');
  if (done.length === 0) return html`<span class="muted">no remote actions</span>`;
  const hits = done.filter((op) => op.cachedResult).length;
  return html`<span class="cache-hit-rate">${Math.round((hits * 100) / done.length)}%</span> (${hits} of ${done.length} remote actions answered from the cache)`;
}

/**
 * One invocation: what its Build Event Protocol stream said (command line, options, targets, tests
 * with their logs, timing, metrics) and the operations the cluster ran for it (matched by the
 * tool_invocation_id of their RequestMetadata). Live while it runs.
 */
export async function invocationPage(ui: UiContext, request: UiRequest, invocationId: string): Promise<PageResult> {
  const caller = request.caller;
  const details = ui.buildEvents?.get(caller, invocationId);
  const operations = ui.scheduler?.history.newestFirst((op) => op.metadata.invocationId === invocationId && caller.mayRead(op.instanceName)) ?? [];
  if (!details && operations.length === 0) throw notFound(`invocation ${invocationId.slice(0, 80)}`);
  const running = details ? details.summary.status === 'running' : operations.some((op) => op.stage !== 'COMPLETED');
  const report = details
    ? ui.reports.reportOf(invocationId, details.summary.eventCount, (offset) => ui.buildEvents!.events(caller, invocationId, offset) ?? [])
    : invocationReport([]);
  const s = details?.summary;
  const summary = s
    ? html`<dl>
<dt>status</dt><dd class="invocation-status">${invocationBadge(s.status)}${s.exitCode ? html` ${s.exitCode}` : ''}${details!.attemptResult ? html` <span class="muted">(${details!.attemptResult})</span>` : ''}</dd>
<dt>command</dt><dd>${s.command}</dd><dt>patterns</dt><dd class="mono">${s.patterns.join(' ')}</dd>
<dt>user</dt><dd>${s.user}</dd><dt>host</dt><dd>${s.host}</dd><dt>tool</dt><dd>${s.buildToolVersion}</dd>
<dt>workspace</dt><dd class="mono">${s.workspaceDirectory}</dd><dt>instance</dt><dd>${s.instance === '' ? '"" (default)' : s.instance}</dd>
<dt>started</dt><dd>${formatTime(s.startTimeMs)}</dd><dt>finished</dt><dd>${formatTime(s.finishTimeMs)}</dd>
<dt>took</dt><dd>${formatDuration(s.finishTimeMs === undefined ? undefined : s.finishTimeMs - s.startTimeMs)}</dd>
<dt>build events</dt><dd>${s.eventCount}</dd></dl>`
    : html`<p class="muted">No build events for this invocation (its client did not publish with --bes_backend); only its remote operations are known.</p>`;
  const commandLine =
    report.commandLine.length > 0 || report.explicitOptions.length > 0
      ? html`<h2>Command line</h2><pre class="command-line">${report.commandLine.join(' ')}</pre>
<h3>Options given</h3><pre class="options">${report.explicitOptions.join('\n')}</pre>
<details><summary>All options as parsed (${report.allOptions.length})</summary><pre>${report.allOptions.join('\n')}</pre></details>`
      : '';
  const targets = details?.targets ?? [];
  const targetRows = targets.map(
    (t) => html`<tr class="target"><td class="mono">${t.label}</td><td>${t.kind ?? ''}</td>
<td>${t.success === undefined ? statusBadge('pending', 'run') : t.success ? statusBadge('built', 'ok') : statusBadge('failed', 'bad')}</td>
<td>${t.testStatus ? statusBadge(t.testStatus, t.testStatus === 'PASSED' ? 'ok' : t.testStatus === 'FLAKY' ? 'warn' : 'bad') : ''}</td></tr>`,
  );
  const testRows: Html[] = [];
  for (const t of report.tests) {
    testRows.push(html`<tr class="test-result"><td class="mono">${t.label}</td><td>${t.run}/${t.shard}/${t.attempt}</td>
<td>${statusBadge(t.status, t.status === 'PASSED' ? 'ok' : t.status === 'FLAKY' ? 'warn' : 'bad')}</td><td>${formatDuration(t.durationMs)}</td>
<td>${t.cachedLocally ? 'cached' : t.strategy}</td><td>${await testOutputs(ui, caller, t)}</td></tr>`);
  }
  const timing = report.metrics?.timingMetrics;
  const actions = report.metrics?.actionSummary;
  const metrics = html`<dl>
<dt>cache hit rate</dt><dd>${cacheHitRate(operations)}</dd>
${actions ? html`<dt>actions</dt><dd>${actions.actionsCreated} created, ${actions.actionsExecuted} executed${actions.runnerCount.length > 0 ? html` (${actions.runnerCount.map((r) => `${r.count} ${r.name}`).join(', ')})` : ''}</dd>` : ''}
${timing ? html`<dt>wall time</dt><dd>${formatDuration(timing.wallTimeInMs)}</dd><dt>CPU time</dt><dd>${formatDuration(timing.cpuTimeInMs)}</dd><dt>analysis</dt><dd>${formatDuration(timing.analysisPhaseTimeInMs)}</dd>` : ''}
</dl>`;
  const body = html`<h1>Invocation <span class="mono">${invocationId}</span></h1>
${summary}${commandLine}
<h2>Timing and cache</h2>${metrics}
<h2>Targets</h2>${targets.length > 0 ? html`<table class="targets"><thead><tr><th>label</th><th>kind</th><th>build</th><th>test</th></tr></thead><tbody>${targetRows}</tbody></table>` : html`<p class="muted">none yet</p>`}
<h2>Test results</h2>${testRows.length > 0 ? html`<table class="tests"><thead><tr><th>label</th><th>run/shard/attempt</th><th>status</th><th>took</th><th>how</th><th>logs</th></tr></thead><tbody>${testRows}</tbody></table>` : html`<p class="muted">none</p>`}
<h2>Remote operations (${operations.length})</h2>${operationTable(operations, { showInvocation: false })}`;
  return { kind: 'html', body: page(`Invocation ${invocationId.slice(0, 8)}`, caller, body, running ? { liveMs: 1000 } : {}) };
}
