import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { needTool } from '../setup/need-tool.js';
import { E2eWorkspace } from './e2e-workspace.js';
import { startKilnCluster } from './kiln-cluster.js';
import { CHROMIUM_MISSING, CHROMIUM_PRESENT, launchChromium, Screenshots, uiUrlOf } from './web-ui-browser.js';

// The web UI in a real headless chromium, against a real `kiln cluster up` (one local executor, the
// web UI on its metrics port) while Kiln builds on it: the queue page follows a running build without
// a reload, the operation and invocation pages link each other, search by digest finds the action,
// an output Tree is browsed and one of its files downloads with the bytes the action wrote.

const DEFS = `
def _tree(ctx):
    d = ctx.actions.declare_directory(ctx.attr.name + "_dir")
    ctx.actions.run_shell(outputs = [d], command = ctx.attr.cmd.replace("OUT", d.path))
    return [DefaultInfo(files = depset([d]))]
tree = rule(_tree, attrs = {"cmd": attr.string()})
`;

const BUILD = `
load(":defs.bzl", "tree")
tree(name = "tree", cmd = "mkdir -p OUT/sub && printf 'alpha\\\\n' > OUT/a.txt && printf 'the bytes of b: <b>&amp;</b>\\\\n' > OUT/sub/b.txt")
genrule(name = "hello", outs = ["hello.txt"], cmd = "echo hello from the cluster > $@")
genrule(name = "slow", outs = ["slow.txt"], cmd = "sleep 6 && echo slow > $@")
`;

describe('the web UI in a browser, on a running cluster', () => {
  if (!needTool('chromium', CHROMIUM_PRESENT, CHROMIUM_MISSING)) return;

  it('shows a live build, links operations and invocations both ways, finds actions by digest, reruns one, browses a Tree and downloads a file', {
    timeout: 240_000,
  }, async () => {
    const ws = new E2eWorkspace({ WORKSPACE: 'workspace(name = "ui")\n', 'defs.bzl': DEFS, BUILD });
    const config = join(ws.home, 'cluster.json');
    writeFileSync(config, JSON.stringify({ metricsPort: 0, buildEvents: {} }));
    const cluster = await startKilnCluster(['--executors', '1', '--runner', 'local', '--config', config]);
    const ui = uiUrlOf(cluster.log());
    const shots = new Screenshots();
    const browser = await launchChromium();
    const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();

    // The queue page, opened before the build, shows its running action without being reloaded.
    await page.goto(`${ui}queue`);
    await page.evaluate(() => Object.assign(globalThis, { kilnMarker: 'not reloaded' }));
    const build = ws.kiln(['build', `--remote_executor=${cluster.endpoint}`, '//...']);
    await page.waitForSelector('table.executors ul.running li', { timeout: 120_000 });
    expect(await page.evaluate(() => (globalThis as { kilnMarker?: string }).kilnMarker)).toBe('not reloaded');
    expect(Number(await page.getAttribute('html', 'data-refreshed'))).toBeGreaterThan(0);
    await shots.take(page, 'queue', true);
    const built = await build;
    expect(built.code, built.stderr).toBe(0);

    // Every action of the build is a recent operation, named by its target.
    await page.goto(`${ui}operations`);
    await shots.take(page, 'operations');
    for (const target of ['//:hello', '//:slow', '//:tree']) await page.locator('table.operations tr', { hasText: target }).first().waitFor();

    // The operation of //:hello names its invocation, whose page lists the operation back.
    await page.locator('table.operations tr', { hasText: '//:hello' }).first().locator('a').first().click();
    await page.waitForSelector('a.invocation-link');
    const operationPath = new URL(page.url()).pathname;
    expect(operationPath).toMatch(/^\/operations\/[0-9a-f-]{36}$/);
    expect(await page.textContent('.worker')).toBe('executor-0');
    expect(await page.textContent('dd.command')).toContain('echo hello from the cluster');
    await shots.take(page, 'operation');
    const actionPath = new URL((await page.getAttribute('a.action-link', 'href'))!, ui).pathname;
    await page.click('a.invocation-link');
    await page.waitForSelector('table.operations');
    await shots.take(page, 'invocation-of-kiln-build');
    expect(await page.locator('table.operations tr').count()).toBe(1 + 3);
    await page.locator(`table.operations a[href="${operationPath}"]`).click();
    expect(new URL(page.url()).pathname).toBe(operationPath);

    // Search by the action's digest, in the header's box, leads to the action's page.
    const digest = /\/blobs\/([0-9a-f]{64})\/(\d+)\/action\//.exec(actionPath)!;
    await page.fill('header input[name=digest]', `${digest[1]}/${digest[2]}`);
    await page.press('header input[name=digest]', 'Enter');
    await page.waitForURL((url) => url.pathname === actionPath);
    expect(await page.textContent('pre.arguments')).toContain('echo hello from the cluster');
    expect(await page.textContent('.exit-code')).toBe('0');
    expect(await page.locator('pre.reproduce').first().textContent()).toBe(
      `kiln build --remote_executor=${cluster.endpoint} --noremote_accept_cached //:hello`,
    );
    await shots.take(page, 'action');
    // Auth is off on this cluster: everyone may rerun, as every call is served. The rerun is a new
    // operation, run by the executor (not answered from the cache), whose page follows it live.
    await page.click('form.rerun button');
    await page.waitForURL((url) => /^\/operations\/[0-9a-f-]{36}$/.test(url.pathname) && url.pathname !== operationPath);
    await page.waitForSelector('.status:has-text("exit 0")', { timeout: 60_000 });
    expect(await page.textContent('.worker')).toBe('executor-0');
    expect(await page.textContent('main')).toContain('kiln web UI');
    await page.goBack();
    await page.click('a.input-root');
    await page.waitForSelector('table.listing, p.muted');
    await shots.take(page, 'input-root');

    // The tree rule's output directory: its Tree, a subdirectory, and a file with the action's bytes.
    await page.goto(`${ui}operations?target=${encodeURIComponent('//:tree')}`);
    await page.locator('table.operations tr', { hasText: '//:tree' }).first().locator('a').first().click();
    await page.click('table.outputs a:has-text("browse tree")');
    await page.waitForSelector('table.listing');
    await shots.take(page, 'tree');
    await page.click('table.listing a:has-text("sub/")');
    await page.waitForSelector('table.listing a:has-text("b.txt")');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('table.listing a:has-text("b.txt")')]);
    expect(download.suggestedFilename()).toBe('b.txt');
    const saved = join(shots.dir, 'b.txt');
    await download.saveAs(saved);
    expect(readFileSync(saved, 'utf8')).toBe(readFileSync(join(ws.root, 'kiln-bin/tree_dir/sub/b.txt'), 'utf8'));
    expect(readFileSync(saved, 'utf8')).toBe('the bytes of b: <b>&amp;</b>\n');

    // The invocations page renders (Kiln's builds do not publish build events yet: it lists none).
    await page.goto(`${ui}invocations`);
    await page.waitForSelector('h1');
    await shots.take(page, 'invocations');
  });
});
