import { html, trusted, type Html } from './html.js';
import type { UiCaller } from './ui-caller.js';

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
header{background:#23303d;color:#fff;padding:8px 16px;display:flex;gap:18px;align-items:center;flex-wrap:wrap}
header a{color:#dce6f0;text-decoration:none}header a:hover{color:#fff}header strong{font-size:16px}
header form{margin-left:auto;display:flex;gap:6px}
main{padding:12px 16px;max-width:1400px}
h1{font-size:20px;margin:8px 0 12px}h2{font-size:16px;margin:18px 0 8px}
table{border-collapse:collapse;background:#fff;width:100%;margin-bottom:8px}
th,td{border:1px solid #dde2e8;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef1f5;font-weight:600}
code,pre,.mono{font-family:ui-monospace,Menlo,monospace;font-size:12.5px}
pre{background:#fff;border:1px solid #dde2e8;padding:8px;overflow:auto;max-height:420px;white-space:pre-wrap;word-break:break-all}
.status{display:inline-block;padding:0 6px;border-radius:3px;font-size:12px;font-weight:600}
.ok{background:#d7f0dc;color:#165a26}.bad{background:#f8d7da;color:#7a1620}.run{background:#d8e7fb;color:#163f7a}.warn{background:#fdf1cc;color:#6b5000}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0 0 8px}dt{font-weight:600}dd{margin:0}
form.filters{display:flex;gap:8px;flex-wrap:wrap;margin-bottom:10px}input,select,button{font:inherit;padding:2px 6px}
.muted{color:#66707a}.error{color:#7a1620}
`;

export interface PageOptions {
  /** Refresh `<main>` every this many ms (the live-refresh script); absent for a page that no longer changes. */
  readonly liveMs?: number;
}

/** The page around `body`: navigation, the search box, the stylesheet, and the live-refresh script. */
export function page(title: string, caller: UiCaller | undefined, body: Html, options: PageOptions = {}): Html {
  const who = caller?.signedIn
    ? html`<span class="muted">${caller.principals.join(', ')}</span><form method="post" action="/logout"><input type="hidden" name="form_token" value="${caller.formToken}"><button>Sign out</button></form>`
    : caller && caller.principals.length > 0
      ? html`<a href="/login">Sign in</a>`
      : '';
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Kiln</title><style>${trusted(STYLE)}</style></head>
<body><header><strong>Kiln</strong><a href="/invocations">Invocations</a><a href="/queue">Queue and executors</a><a href="/operations">Operations</a>
<form method="get" action="/search" role="search"><input name="digest" placeholder="action digest (hash or hash/size)" size="40" aria-label="action digest"><button>Search</button></form>
${who}</header>
<main${options.liveMs ? trusted(` data-live="${options.liveMs}"`) : ''}>${body}</main>
<script src="/ui/live.js"></script></body></html>
`;
}

/** A status word in a colour: good, bad, running, other. */
export function statusBadge(text: string, tone: 'ok' | 'bad' | 'run' | 'warn'): Html {
  return html`<span class="status ${tone}">${text}</span>`;
}
