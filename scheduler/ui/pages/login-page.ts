import { html } from '../html.js';
import { page } from '../layout.js';
import type { PageResult } from '../ui-context.js';

/** A path of this site to go back to after signing in; anything else (another site, `//host`) is `/`. */
export function localPath(next: string | null | undefined): string {
  return next?.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/';
}

/** The sign-in form: a token of the cluster's token file, kept in an HttpOnly cookie. */
export function loginPage(next: string, problem: string | undefined, status = 200): PageResult {
  const body = html`<h1>Sign in</h1>
${problem ? html`<p class="error">${problem}</p>` : ''}
<form method="post" action="/login"><input type="hidden" name="next" value="${localPath(next)}">
<label>Token <input type="password" name="token" size="50" autocomplete="current-password"></label> <button>Sign in</button></form>
<p class="muted">The token is one of the cluster's (kiln cluster token NAME). Pages show the instances its roles may read.</p>`;
  return { kind: 'html', status, body: page('Sign in', undefined, body) };
}
