import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKilnCluster, type KilnCluster } from '../e2e/kiln-cluster.js';
import { CHROMIUM_MISSING, CHROMIUM_PRESENT, launchChromium, Screenshots, uiUrlOf } from '../e2e/web-ui-browser.js';
import { BAZEL_2, BAZEL_2_MISSING, runBazel2 } from '../setup/bazel-2.js';
import { BAZEL_4, BAZEL_4_MISSING, runBazel4 } from '../setup/bazel-4.js';
import { needTool } from '../setup/need-tool.js';

// Bazel 4.2.3 and Bazel 2.1.0 build (and 4.2.3 tests) on a real `kiln cluster up` while publishing
// their Build Event Protocol streams to it (--bes_backend); --bes_results_url points at the web UI.
// Their invocations then show in the UI with targets, tests and the operations they ran remotely,
// and the link Bazel prints leads to the invocation's page. Bazel 2.1.0 cannot run sh_test offline
// (it would download toolchains), so it builds genrules only.

const WORKSPACE_FILES: Record<string, string> = {
  WORKSPACE: 'workspace(name = "ui_bazel")\n',
  BUILD: `
genrule(name = "hello", outs = ["hello.txt"], cmd = "echo hello > $@")
genrule(name = "twice", srcs = [":hello"], outs = ["twice.txt"], cmd = "cat $< $< > $@")
sh_test(name = "greets", srcs = ["greets.sh"], data = [":twice"])
`,
  'greets.sh': '#!/bin/sh\necho "the test ran and read: $(head -1 twice.txt)"\ngrep -q hello twice.txt\n',
};

async function workspaceIn(root: string, withTests: boolean): Promise<void> {
  await Promise.all(['ws', 'home', 'tmp'].map((d) => mkdir(join(root, d), { recursive: true })));
  for (const [name, text] of Object.entries(WORKSPACE_FILES)) {
    const content = withTests || name !== 'BUILD' ? text : text.replace(/^sh_test.*$/m, '');
    await writeFile(join(root, 'ws', name), content, { mode: name.endsWith('.sh') ? 0o755 : 0o644 });
  }
}

describe('Bazel publishing build events to the cluster it builds on, seen in the web UI', () => {
  const haveBazel4 = needTool('Bazel 4.2.3', BAZEL_4 !== '', BAZEL_4_MISSING);
  const haveBazel2 = needTool('Bazel 2.1.0', BAZEL_2 !== '', BAZEL_2_MISSING);
  const haveChromium = needTool('chromium', CHROMIUM_PRESENT, CHROMIUM_MISSING);
  if (!haveBazel4 && !haveBazel2) return;
  let dir: string;
  let cluster: KilnCluster;
  let ui: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kiln-ui-bazel-'));
    await writeFile(join(dir, 'cluster.json'), JSON.stringify({ metricsPort: 0, buildEvents: {} }));
  });

  afterAll(async () => {
    if (!dir) return;
    // Bazel makes its install trees read-only.
    await new Promise((resolve) => spawn('chmod', ['-R', 'u+w', dir], { stdio: 'ignore' }).on('close', resolve));
    await rm(dir, { recursive: true, force: true });
  });

  const flags = (extra: string[] = []) => [
    `--remote_executor=${cluster.endpoint}`,
    `--bes_backend=${cluster.endpoint}`,
    `--bes_results_url=${ui}invocation/`,
    '--bes_timeout=60s',
    '--noshow_progress',
    '--color=no',
    '--curses=no',
    ...extra,
  ];

  /** The invocation id in Bazel's "Streaming build results to: URL" line, and that URL. */
  const resultsLink = (output: string) => {
    const m = /Streaming build results to: (http:\/\/\S+\/invocation\/([0-9a-f-]{36}))/.exec(output);
    expect(m, output).not.toBeNull();
    return { url: m![1]!, invocationId: m![2]! };
  };

  const pageText = async (url: string) => {
    const response = await fetch(url);
    expect(response.status, url).toBe(200);
    return response.text();
  };

  it.runIf(haveBazel4 && haveChromium)(
    'Bazel 4.2.3: bazel test on the cluster shows up live; its invocation shows targets, the test with its log, and its operations',
    { timeout: 600_000 },
    async () => {
      const root = join(dir, 'bazel4');
      await workspaceIn(root, true);
      cluster = await startKilnCluster(['--executors', '1', '--runner', 'local', '--config', join(dir, 'cluster.json')]);
      ui = uiUrlOf(cluster.log());
      const browser = await launchChromium();
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      // The invocations page, open before the build, shows it running, then succeeded, without a reload.
      await page.goto(`${ui}invocations`);
      await page.evaluate(() => Object.assign(globalThis, { kilnMarker: 'not reloaded' }));
      const test = runBazel4(root, ['test', ...flags(['--test_output=errors']), '//...']);
      await page.waitForSelector('table.invocations tr.invocation .status.run', { timeout: 300_000 });
      const run = await test;
      expect(run.code, run.output).toBe(0);
      await page.waitForSelector('table.invocations tr.invocation .status.ok');
      expect(await page.evaluate(() => (globalThis as { kilnMarker?: string }).kilnMarker)).toBe('not reloaded');
      const { url, invocationId } = resultsLink(run.output);

      const list = await pageText(`${ui}invocations?command=test`);
      expect(list).toContain(invocationId.slice(0, 8));
      await page.goto(url);
      await page.waitForSelector('table.targets');
      expect(await page.textContent('.invocation-status')).toContain('succeeded');
      expect(await page.textContent('pre.command-line')).toContain('test');
      for (const label of ['//:hello', '//:twice', '//:greets']) await page.locator('table.targets tr', { hasText: label }).waitFor();
      expect(await page.locator('table.targets tr', { hasText: '//:greets' }).textContent()).toContain('PASSED');
      expect(await page.locator('table.tests tr', { hasText: '//:greets' }).textContent()).toContain('PASSED');
      // Bazel uploaded test.log to the cluster's CAS; the page shows it.
      expect(await page.textContent('pre.test-log')).toContain('the test ran and read: hello');
      // The actions Bazel ran remotely are the invocation's operations (its RequestMetadata names it).
      const operations = page.locator('table.operations tbody tr');
      expect(await operations.count()).toBeGreaterThanOrEqual(3);
      expect(await page.locator('table.operations', { hasText: '//:greets' }).count()).toBe(1);
      await new Screenshots().take(page, 'invocation', true);
      // And each operation's page names the invocation back.
      await operations.first().locator('a').first().click();
      await page.waitForSelector('a.invocation-link');
      expect(await page.getAttribute('a.invocation-link', 'href')).toBe(`/invocation/${invocationId}`);
      expect(await page.textContent('main')).toContain('bazel');
      await cluster.stop();
    },
  );

  it.runIf(haveBazel2)('Bazel 2.1.0: bazel build on the cluster; its invocation shows its targets and operations', { timeout: 600_000 }, async () => {
    const root = join(dir, 'bazel2');
    await workspaceIn(root, false);
    cluster = await startKilnCluster(['--executors', '1', '--runner', 'local', '--config', join(dir, 'cluster.json')]);
    ui = uiUrlOf(cluster.log());
    try {
      const run = await runBazel2(root, ['build', ...flags(), '//...']);
      expect(run.code, run.output).toBe(0);
      const { url, invocationId } = resultsLink(run.output);
      const page = await pageText(url);
      expect(page).toContain(`Invocation <span class="mono">${invocationId}</span>`);
      expect(page).toMatch(/<td class="mono">\/\/:hello<\/td><td>genrule rule<\/td>\s*<td><span class="status ok">built<\/span>/);
      expect(page).toContain('//:twice');
      expect(page).toContain('2.1.0');
      // Both genrules ran on the cluster, as operations of this invocation.
      expect(page).toMatch(/Remote operations \(2\)/);
      const list = await pageText(`${ui}invocations?pattern=${encodeURIComponent('//...')}&status=succeeded`);
      expect(list).toContain(`/invocation/${invocationId}`);
    } finally {
      await runBazel2(root, ['shutdown']).catch(() => undefined);
      await cluster.stop();
    }
  });
});
