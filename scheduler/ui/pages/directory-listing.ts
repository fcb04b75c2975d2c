import type { reapi } from '../../../src/core/index.js';
import { html, type Html } from '../html.js';
import { formatBytes } from '../format.js';
import { blobUrl } from '../ui-links.js';

const digestOf = (d: reapi.Digest | null | undefined) => ({ hash: d?.hash ?? '', sizeBytes: Number(d?.sizeBytes ?? 0) });

/**
 * A Directory's entries: files link to their download, subdirectories to `subdirectoryUrl` (their own
 * Directory page, or the next path inside a Tree), symlinks show their target.
 */
export function directoryListing(instanceName: string, directory: reapi.Directory, subdirectoryUrl: (node: reapi.DirectoryNode) => string): Html {
  const rows = [
    ...directory.directories.map(
      (d) =>
        html`<tr class="dir"><td>dir</td><td><a class="mono" href="${subdirectoryUrl(d)}">${d.name}/</a></td><td></td><td class="mono">${d.digest?.hash.slice(0, 12)}</td></tr>`,
    ),
    ...directory.files.map(
      (f) =>
        html`<tr class="file"><td>${f.isExecutable ? 'exec' : 'file'}</td><td><a class="mono" href="${blobUrl(instanceName, digestOf(f.digest), 'file', [f.name])}">${f.name}</a></td>
<td>${formatBytes(Number(f.digest?.sizeBytes ?? 0))}</td><td class="mono">${f.digest?.hash.slice(0, 12)}</td></tr>`,
    ),
    ...directory.symlinks.map(
      (s) => html`<tr class="symlink"><td>link</td><td class="mono">${s.name}</td><td colspan="2" class="mono">→ ${s.target}</td></tr>`,
    ),
  ];
  if (rows.length === 0) return html`<p class="muted">empty directory</p>`;
  return html`<table class="listing"><thead><tr><th>kind</th><th>name</th><th>size</th><th>digest</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export { digestOf };
