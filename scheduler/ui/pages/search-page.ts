import type { Digest } from '../../../src/core/index.js';
import { html } from '../html.js';
import { page } from '../layout.js';
import type { PageResult, UiContext, UiRequest } from '../ui-context.js';
import { blobUrl } from '../ui-links.js';
import { operationTable } from './operation-table.js';

/** `HASH`, `HASH/SIZE`, `HASH-SIZE` (bb-browser's form) or a URL or resource name holding `blobs/HASH/SIZE`. */
export function parseDigestQuery(text: string): { hash: string; sizeBytes?: number } | undefined {
  const m = /([0-9a-fA-F]{64})(?:[/-](\d{1,15}))?/.exec(text.trim());
  if (!m) return undefined;
  return { hash: m[1]!.toLowerCase(), ...(m[2] !== undefined ? { sizeBytes: Number(m[2]) } : {}) };
}

/**
 * Search by action digest: the recent operations that ran it, and the instances whose CAS holds the
 * Action. One Action found and no doubt about which: straight to its page.
 */
export async function searchPage(ui: UiContext, request: UiRequest): Promise<PageResult> {
  const caller = request.caller;
  const text = request.url.searchParams.get('digest') ?? '';
  const wanted = parseDigestQuery(text);
  if (!wanted) {
    const body = html`<h1>Search</h1><p class="error">${text === '' ? 'Enter an action digest.' : 'Not a digest: expected 64 hex digits, optionally /SIZE.'}</p>`;
    return { kind: 'html', status: text === '' ? 200 : 400, body: page('Search', caller, body) };
  }
  const operations =
    ui.scheduler?.history.newestFirst(
      (op) =>
        caller.mayRead(op.instanceName) &&
        op.actionDigest.hash === wanted.hash &&
        (wanted.sizeBytes === undefined || op.actionDigest.sizeBytes === wanted.sizeBytes),
    ) ?? [];
  // The candidates: the size given or those of the operations, on each instance the caller reads.
  const candidates = new Map<string, { instanceName: string; digest: Digest }>();
  const sizes = wanted.sizeBytes !== undefined ? [wanted.sizeBytes] : [...new Set(operations.map((op) => op.actionDigest.sizeBytes))];
  for (const instanceName of ui.server.instances.names.filter((n) => caller.mayRead(n))) {
    for (const sizeBytes of sizes) {
      const digest = { hash: wanted.hash, sizeBytes };
      const missing = await ui.server.instances
        .get(instanceName)
        .cas.findMissing([digest])
        .catch(() => [digest]);
      if (missing.length === 0) candidates.set(`${instanceName}\n${sizeBytes}`, { instanceName, digest });
    }
  }
  const found = [...candidates.values()];
  if (found.length === 1) return { kind: 'redirect', location: blobUrl(found[0]!.instanceName, found[0]!.digest, 'action') };
  const body = html`<h1>Search: <span class="mono">${text}</span></h1>
<h2>Actions</h2>${
    found.length > 0
      ? html`<ul>${found.map((f) => html`<li><a class="mono" href="${blobUrl(f.instanceName, f.digest, 'action')}">${f.digest.hash}/${f.digest.sizeBytes}</a> on instance ${f.instanceName === '' ? '""' : f.instanceName}</li>`)}</ul>`
      : html`<p class="muted">No Action with this digest in a CAS you may read.</p>`
  }
<h2>Operations</h2>${operationTable(operations)}`;
  return { kind: 'html', status: found.length === 0 && operations.length === 0 ? 404 : 200, body: page('Search', caller, body) };
}
