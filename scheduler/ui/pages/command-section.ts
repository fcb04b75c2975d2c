import type { reapi } from '../../../src/core/index.js';
import { html, type Html } from '../html.js';

/** A Command: arguments, environment, working directory, outputs, platform. */
export function commandSection(command: reapi.Command): Html {
  // REAPI 2.1 clients send output_paths and the older fields alike (for 2.0 servers): each path once.
  const outputs = [...new Set([...command.outputPaths, ...command.outputFiles, ...command.outputDirectories.map((d) => `${d}/`)])];
  return html`<h3>Arguments</h3><pre class="arguments">${command.arguments.join('\n')}</pre>
<h3>Environment</h3>${
    command.environmentVariables.length > 0
      ? html`<table class="environment"><tbody>${command.environmentVariables.map((v) => html`<tr><td class="mono">${v.name}</td><td class="mono">${v.value}</td></tr>`)}</tbody></table>`
      : html`<p class="muted">empty</p>`
  }
<dl><dt>working directory</dt><dd class="mono">${command.workingDirectory || '(the input root)'}</dd>
<dt>outputs</dt><dd class="mono">${outputs.join(', ')}</dd>
<dt>platform (command)</dt><dd class="mono">${(command.platform?.properties ?? []).map((p) => `${p.name}=${p.value}`).join(', ')}</dd></dl>`;
}
