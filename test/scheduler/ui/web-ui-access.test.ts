import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeMessage, reapi } from '../../../src/core/index.js';
import { createExecutionServer, newToken, parseCacheServerConfig, startCacheServer, type CacheServer, type ExecutionServer } from '../../../scheduler/index.js';
import { NO_METADATA } from '../../../scheduler/execution/index.js';

// The web UI's authentication and authorisation on a port with auth on, over plain HTTP (no browser):
// who may see what, who may rerun, form tokens, the sign-in cookie, and escaping of what clients sent.

describe('the web UI with auth on', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kiln-ui-access-'));
  const tokens = { reader: newToken('reader'), admin: newToken('admin'), other: newToken('other') };
  let server: CacheServer;
  let execution: ExecutionServer;
  let ui: string;
  let actionPath: string;
  let operationPath: string;

  beforeAll(async () => {
    writeFileSync(
      join(dir, 'tokens.txt'),
      `${Object.values(tokens)
        .map((t) => t.line)
        .join('\n')}\n`,
    );
    const config = parseCacheServerConfig(
      {
        instanceNames: ['', 'other'],
        metricsPort: 0,
        buildEvents: {},
        auth: {
          tokenFile: 'tokens.txt',
          roles: { 'token:reader': { '': 'cache-reader' }, 'token:admin': { '*': 'admin' }, 'token:other': { other: 'cache-reader' } },
        },
      },
      'ui.json',
      dir,
      { host: '127.0.0.1', port: 0 },
    );
    execution = createExecutionServer();
    server = await startCacheServer(config, {
      log: { info: () => undefined, warn: () => undefined },
      extraServices: (ctx) => execution.services(ctx),
      executionCapabilities: execution.capabilities,
      scheduler: execution.scheduler,
    });
    ui = server.uiUrl!;
    const cas = server.context.instances.get('').cas;
    const root = encodeMessage(reapi.Directory, {});
    const command = encodeMessage(reapi.Command, { arguments: ['/bin/echo', '<img src=x onerror=alert(1)>'], outputPaths: ['out'] });
    const action = encodeMessage(reapi.Action, { commandDigest: command.digest, inputRootDigest: root.digest });
    for (const blob of [root, command, action]) await cas.put(blob.digest, blob.data);
    actionPath = `/blobs/${action.digest.hash}/${action.digest.sizeBytes}/action/`;
    // An operation whose client sent hostile metadata.
    const op = execution.scheduler.begin('', action.digest, { ...NO_METADATA, targetId: '<script>alert(1)</script>', invocationId: 'inv"><b>x' });
    operationPath = `/${op.name}`;
  });

  afterAll(async () => {
    await server?.close();
    execution?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (path: string, token?: string, headers: Record<string, string> = {}) =>
    fetch(new URL(path, ui), { redirect: 'manual', headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });
  const post = (path: string, form: Record<string, string>, token?: string) =>
    fetch(new URL(path, ui), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: new URLSearchParams(form).toString(),
    });
  const formTokenOf = (page: string) => /name="form_token" value="([^"]+)"/.exec(page)![1]!;

  it('asks for a token without credentials, and refuses a token that is not valid', async () => {
    const none = await get('/queue');
    expect(none.status).toBe(401);
    expect(await none.text()).toContain('<form method="post" action="/login">');
    const bad = await get('/queue', 'not-a-token');
    expect(bad.status).toBe(401);
    expect(await bad.text()).toContain('the token is not valid');
    // Metrics need no credentials, as before.
    expect((await get('/metrics')).status).toBe(200);
  });

  it("shows a reader its instance's operations and actions, with what clients sent escaped", async () => {
    const list = await (await get('/operations', tokens.reader.token)).text();
    expect(list).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(list).not.toContain('<script>alert');
    const op = await get(operationPath, tokens.reader.token);
    expect(op.status).toBe(200);
    const opPage = await op.text();
    expect(opPage).toContain('inv&quot;&gt;&lt;b&gt;x');
    expect(opPage).not.toContain('<b>x');
    const action = await get(actionPath, tokens.reader.token);
    expect(action.status).toBe(200);
    const actionPage = await action.text();
    expect(actionPage).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(actionPage).not.toContain('<img');
    expect(action.headers.get('content-security-policy')).toContain("script-src 'self'");
  });

  it('shows nothing of an instance the caller may not read, in the words of a missing blob', async () => {
    const other = await get(actionPath, tokens.other.token);
    expect(other.status).toBe(404);
    const missing = await get(`/blobs/${'0'.repeat(64)}/5/action/`, tokens.reader.token);
    expect(missing.status).toBe(404);
    expect(await other.text()).toContain('the Action is not here, or you may not read it');
    expect(await (await get('/operations', tokens.other.token)).text()).not.toContain('alert(1)');
    expect((await get(operationPath, tokens.other.token)).status).toBe(404);
  });

  it('lets only an admin rerun, and only with the form token of its own page', async () => {
    const readerPage = await (await get(actionPath, tokens.reader.token)).text();
    expect(readerPage).not.toContain('Rerun on the cluster');
    const byReader = await post(actionPath, { rerun: '1', form_token: formTokenOf(readerPage) }, tokens.reader.token);
    expect(byReader.status).toBe(404);

    const adminPage = await (await get(actionPath, tokens.admin.token)).text();
    expect(adminPage).toContain('Rerun on the cluster');
    expect((await post(actionPath, { rerun: '1' }, tokens.admin.token)).status).toBe(403);
    expect((await post(actionPath, { rerun: '1', form_token: formTokenOf(readerPage) }, tokens.admin.token)).status).toBe(403);
    const rerun = await post(actionPath, { rerun: '1', form_token: formTokenOf(adminPage) }, tokens.admin.token);
    expect(rerun.status).toBe(303);
    const location = rerun.headers.get('location')!;
    expect(location).toMatch(/^\/operations\/[0-9a-f-]{36}$/);
    const queued = await (await get(location, tokens.admin.token)).text();
    expect(queued).toContain('queued');
    expect(queued).toContain('kiln web UI');
    // No executor is connected: the rerun waits in its platform's queue, which a reader of the
    // instance sees and a reader of another does not.
    const queue = await (await get('/queue', tokens.reader.token)).text();
    expect(queue).toMatch(/<td class="queued-count">1<\/td>/);
    expect(queue).toContain(location);
    expect(queue).toContain('No executor is connected.');
    expect(await (await get('/queue', tokens.other.token)).text()).toContain('Nothing is queued.');
  });

  it('signs in with a token into an HttpOnly cookie, and only to a page of this site', async () => {
    const refused = await post('/login', { token: 'wrong', next: '/queue' });
    expect(refused.status).toBe(401);
    const signedIn = await post('/login', { token: tokens.reader.token, next: '//evil.example/x' });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe('/');
    const cookie = signedIn.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^kiln_token=[^;]+; Path=\/; HttpOnly; SameSite=Strict/);
    const page = await get('/queue', undefined, { cookie: cookie.split(';')[0]! });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('token:reader');
  });
});
