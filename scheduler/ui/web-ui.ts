import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { grpcStatusOf, googleRpc, InvalidArgumentError } from '../../src/core/index.js';
import type { HttpPages } from '../../src/core/metrics/index.js';
import { rerunAction } from './action-rerun.js';
import { html } from './html.js';
import { InvocationReports } from './invocation-report.js';
import { page } from './layout.js';
import { LIVE_REFRESH_SCRIPT } from './live-refresh-script.js';
import { actionPage } from './pages/action-page.js';
import { commandPage } from './pages/command-page.js';
import { directoryPage } from './pages/directory-page.js';
import { fileDownload } from './pages/file-download.js';
import { invocationPage } from './pages/invocation-page.js';
import { invocationsPage } from './pages/invocations-page.js';
import { localPath, loginPage } from './pages/login-page.js';
import { operationPage } from './pages/operation-page.js';
import { operationsPage } from './pages/operations-page.js';
import { queuePage } from './pages/queue-page.js';
import { searchPage } from './pages/search-page.js';
import { treePage } from './pages/tree-page.js';
import { formTokenMatches, identifyUiCaller, SESSION_COOKIE, type UiAuth, type UiCaller } from './ui-caller.js';
import type { PageResult, UiContext, UiRequest } from './ui-context.js';
import { operationUrl } from './ui-links.js';
import { parseUiPath } from './ui-path.js';

/** Largest form body read (the forms hold a token and a few fields). */
const MAX_FORM_BYTES = 16 * 1024;

/** Every page: no script but ours, no styles but inline ones, no framing, no request elsewhere. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

const HTTP_STATUS: Partial<Record<googleRpc.Code, number>> = {
  [googleRpc.Code.INVALID_ARGUMENT]: 400,
  [googleRpc.Code.NOT_FOUND]: 404,
  [googleRpc.Code.FAILED_PRECONDITION]: 409,
  [googleRpc.Code.RESOURCE_EXHAUSTED]: 429,
  [googleRpc.Code.PERMISSION_DENIED]: 404,
  [googleRpc.Code.UNAUTHENTICATED]: 401,
};

function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const parts: Buffer[] = [];
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_FORM_BYTES) {
        reject(new Error('the form is too large'));
        request.destroy();
      } else parts.push(chunk);
    });
    request.on('end', () => resolve(new URLSearchParams(Buffer.concat(parts).toString('utf8'))));
    request.on('error', reject);
  });
}

async function send(response: ServerResponse, result: PageResult, head: boolean): Promise<void> {
  if (result.kind === 'redirect') {
    response.writeHead(303, { ...SECURITY_HEADERS, location: result.location, ...(result.cookie ? { 'set-cookie': result.cookie } : {}) }).end();
    return;
  }
  if (result.kind === 'html') {
    const body = Buffer.from(result.body.text);
    response
      .writeHead(result.status ?? 200, { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8', 'content-length': body.length })
      .end(head ? undefined : body);
    return;
  }
  response.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-type': result.contentType,
    'content-disposition': result.disposition,
    'content-length': result.sizeBytes,
  });
  if (head) {
    response.end();
    return;
  }
  for await (const chunk of result.chunks) {
    if (!response.write(chunk)) await new Promise((resolve) => response.once('drain', resolve));
    if (response.destroyed) return;
  }
  response.end();
}

/** The pages that need a caller, by path. */
async function route(ui: UiContext, request: UiRequest): Promise<PageResult> {
  const path = parseUiPath(request.url.pathname);
  if (path.kind === 'blob') {
    const { instanceName, digest, view, rest } = path;
    if (request.method === 'POST') {
      if (view !== 'action' || request.form.get('rerun') !== '1') throw new InvalidArgumentError('nothing to do here with POST');
      return { kind: 'redirect', location: operationUrl(await rerunAction(ui, request.caller, instanceName, digest)) };
    }
    switch (view) {
      case 'action':
        return actionPage(ui, request, instanceName, digest);
      case 'command':
        return commandPage(ui, request, instanceName, digest);
      case 'directory':
        return directoryPage(ui, request, instanceName, digest);
      case 'tree':
        return treePage(ui, request, instanceName, digest, rest);
      case 'file':
        return fileDownload(ui, request, instanceName, digest, rest);
    }
  }
  if (request.method === 'POST') throw new InvalidArgumentError('nothing to do here with POST');
  if (path.kind === 'operation') return operationPage(ui, request, path.name);
  const [first = '', second, ...more] = path.segments;
  if (first === '' && second === undefined) return { kind: 'redirect', location: '/invocations' };
  if (first === 'invocations' && second === undefined) return invocationsPage(ui, request);
  if (first === 'invocation' && second !== undefined && more.length === 0) return invocationPage(ui, request, second);
  if (first === 'queue' && second === undefined) return queuePage(ui, request);
  if (first === 'operations' && second === undefined) return operationsPage(ui, request);
  if (first === 'search' && second === undefined) return searchPage(ui, request);
  return {
    kind: 'html',
    status: 404,
    body: page('Not found', request.caller, html`<h1>Not found</h1><p>No page at <span class="mono">${request.url.pathname.slice(0, 200)}</span>.</p>`),
  };
}

/** Sign in (a token checked against the token file, kept in a cookie) and sign out. */
async function session(ui: UiAuth, request: IncomingMessage, url: URL, form: URLSearchParams, caller: UiCaller | undefined): Promise<PageResult> {
  const cookie = (value: string, maxAge: number) => `${SESSION_COOKIE}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}`;
  if (url.pathname === '/logout') {
    if (request.method !== 'POST' || !caller || !formTokenMatches(caller, form.get('form_token') ?? undefined))
      return loginPage('/', 'Sign out with the button of a page.', 400);
    return { kind: 'redirect', location: '/login', cookie: cookie('', 0) };
  }
  if (request.method !== 'POST') return loginPage(url.searchParams.get('next') ?? '/', undefined);
  const token = form.get('token') ?? '';
  const next = localPath(form.get('next'));
  if (!ui.auth) return { kind: 'redirect', location: next };
  if (ui.auth.tokens.nameOf(token) === undefined) return loginPage(next, 'That token is not valid.', 401);
  return { kind: 'redirect', location: next, cookie: cookie(token, 12 * 3600) };
}

/**
 * The web UI on the scheduler's HTTP port: server-rendered pages of invocations, the queue and
 * executors, operations, actions and the CAS, each request authenticated and authorised as the
 * gRPC port authorises calls. Everything a client sent is escaped by `html` templates.
 */
export function webUi(parts: Omit<UiContext, 'reports'>, auth: Omit<UiAuth, 'secret'>): HttpPages {
  const ui: UiContext = { ...parts, reports: new InvocationReports() };
  const uiAuth: UiAuth = { ...auth, secret: randomBytes(32) };
  return (request, response) => {
    void (async () => {
      const method = request.method ?? 'GET';
      if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') {
        response.writeHead(405, { allow: 'GET, HEAD, POST', 'content-type': 'text/plain' }).end('method not allowed\n');
        return;
      }
      const url = new URL(request.url ?? '/', 'http://kiln.invalid');
      if (url.pathname === '/ui/live.js') {
        response
          .writeHead(200, { ...SECURITY_HEADERS, 'cache-control': 'max-age=300', 'content-type': 'text/javascript; charset=utf-8' })
          .end(method === 'HEAD' ? undefined : LIVE_REFRESH_SCRIPT);
        return;
      }
      const form = method === 'POST' ? await readForm(request) : new URLSearchParams();
      const identity = identifyUiCaller(request, uiAuth);
      const caller = 'caller' in identity ? identity.caller : undefined;
      if (url.pathname === '/login' || url.pathname === '/logout') {
        await send(response, await session(uiAuth, request, url, form, caller), method === 'HEAD');
        return;
      }
      if (!caller) {
        await send(
          response,
          loginPage(url.pathname + url.search, 'unauthenticated' in identity ? identity.unauthenticated : undefined, 401),
          method === 'HEAD',
        );
        return;
      }
      if (method === 'POST' && !formTokenMatches(caller, form.get('form_token') ?? undefined)) {
        await send(
          response,
          {
            kind: 'html',
            status: 403,
            body: page('Refused', caller, html`<h1>Refused</h1><p>The form is stale or came from another site: reload the page and try again.</p>`),
          },
          false,
        );
        return;
      }
      const uiRequest: UiRequest = { url, method, caller, form };
      let result: PageResult;
      try {
        result = await route(ui, uiRequest);
      } catch (e) {
        const status = grpcStatusOf(e);
        const http = HTTP_STATUS[status.code as googleRpc.Code] ?? 500;
        if (http === 500) ui.server.log.warn(`web UI: ${url.pathname.slice(0, 200)}: ${status.message}`);
        result = {
          kind: 'html',
          status: http,
          body: page('Error', caller, html`<h1>${http === 404 ? 'Not found' : 'Error'}</h1><p class="error">${status.message}</p>`),
        };
      }
      await send(response, result, method === 'HEAD');
    })().catch((e: unknown) => {
      ui.server.log.warn(`web UI: ${(e as Error)?.message ?? String(e)}`);
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain' }).end('internal error\n');
      else response.destroy();
    });
  };
}
