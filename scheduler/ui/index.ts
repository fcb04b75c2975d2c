// The scheduler's web UI: server-rendered pages on its HTTP port (the one of /metrics).
export { webUi } from './web-ui.js';
export type { UiContext } from './ui-context.js';
export { escapeHtml, html, type Html } from './html.js';
