import type { reapi } from '../../../src/core/index.js';
import { html, type Html } from '../html.js';
import { between, formatBytes, formatDuration, formatTime, timestampMs } from '../format.js';
import { readText, type UiContext } from '../ui-context.js';
import type { UiCaller } from '../ui-caller.js';
import { blobUrl } from '../ui-links.js';

/** stdout or stderr: inline bytes, else up to 64 KiB read from the CAS, with a link to the whole. */
async function outputStream(
  ui: UiContext,
  caller: UiCaller,
  instanceName: string,
  name: string,
  raw: Buffer,
  digest: reapi.Digest | null | undefined,
): Promise<Html> {
  if (raw.length > 0) return html`<h3>${name}</h3><pre class="${name}">${raw.toString('utf8')}</pre>`;
  if (!digest || Number(digest.sizeBytes) === 0) return html`<h3>${name}</h3><p class="muted">empty</p>`;
  const d = { hash: digest.hash, sizeBytes: Number(digest.sizeBytes) };
  const text = await readText(ui, caller, instanceName, d);
  const link = html`<a href="${blobUrl(instanceName, d, 'file', [name])}">download ${name} (${formatBytes(d.sizeBytes)})</a>`;
  if (!text) return html`<h3>${name}</h3><p>${link} <span class="muted">(not in the CAS any more)</span></p>`;
  return html`<h3>${name}</h3><pre class="${name}">${text.text}</pre>${text.cut ? html`<p>Cut at 64 KiB: ${link}</p>` : html`<p>${link}</p>`}`;
}

/** The stage times of ExecutedActionMetadata: queued, input fetch, execution, output upload. */
export function executionTiming(metadata: reapi.ExecutedActionMetadata | null | undefined): Html {
  if (!metadata) return html`<p class="muted">No execution metadata (answered from the cache, or not run by an executor).</p>`;
  const m = metadata;
  const rows: [string, number | undefined][] = [
    ['queued', between(m.queuedTimestamp, m.workerStartTimestamp)],
    ['input fetch', between(m.inputFetchStartTimestamp, m.inputFetchCompletedTimestamp)],
    ['execution', between(m.executionStartTimestamp, m.executionCompletedTimestamp)],
    ['output upload', between(m.outputUploadStartTimestamp, m.outputUploadCompletedTimestamp)],
    ['on the worker', between(m.workerStartTimestamp, m.workerCompletedTimestamp)],
  ];
  return html`<dl class="timing"><dt>worker</dt><dd>${m.worker}</dd>
<dt>queued at</dt><dd>${formatTime(timestampMs(m.queuedTimestamp))}</dd>
${rows.map(([name, ms]) => html`<dt>${name}</dt><dd data-stage="${name}">${ms === undefined ? '' : formatDuration(ms)}</dd>`)}</dl>`;
}

/** An ActionResult: exit code, stage times, outputs with links into the CAS, stdout and stderr. */
export async function actionResultSection(ui: UiContext, caller: UiCaller, instanceName: string, result: reapi.ActionResult): Promise<Html> {
  const digestOf = (d: reapi.Digest | null | undefined) => ({ hash: d?.hash ?? '', sizeBytes: Number(d?.sizeBytes ?? 0) });
  const files = result.outputFiles.map(
    (f) =>
      html`<tr><td class="mono">${f.path}</td><td>file${f.isExecutable ? ' (executable)' : ''}</td><td>${formatBytes(Number(f.digest?.sizeBytes ?? 0))}</td>
<td><a href="${blobUrl(instanceName, digestOf(f.digest), 'file', [f.path.split('/').at(-1)!])}">download</a></td></tr>`,
  );
  const dirs = result.outputDirectories.map(
    (d) =>
      html`<tr><td class="mono">${d.path}</td><td>directory</td><td></td><td><a href="${blobUrl(instanceName, digestOf(d.treeDigest), 'tree')}">browse tree</a></td></tr>`,
  );
  const links = [...result.outputSymlinks, ...result.outputFileSymlinks, ...result.outputDirectorySymlinks].map(
    (s) => html`<tr><td class="mono">${s.path}</td><td>symlink</td><td colspan="2" class="mono">→ ${s.target}</td></tr>`,
  );
  const outputs = [...files, ...dirs, ...links];
  return html`<dl><dt>exit code</dt><dd class="exit-code">${result.exitCode}</dd></dl>
<h3>Timing</h3>${executionTiming(result.executionMetadata)}
<h3>Outputs</h3>${outputs.length > 0 ? html`<table class="outputs"><thead><tr><th>path</th><th>kind</th><th>size</th><th></th></tr></thead><tbody>${outputs}</tbody></table>` : html`<p class="muted">none</p>`}
${await outputStream(ui, caller, instanceName, 'stdout', result.stdoutRaw, result.stdoutDigest)}
${await outputStream(ui, caller, instanceName, 'stderr', result.stderrRaw, result.stderrDigest)}`;
}
