import { copyFileSync, existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import type { Browser, Page } from 'playwright-core';

/** Debian's chromium (scripts/test-setup.d/50-chromium.sh); Playwright downloads no browser of its own. */
export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_PRESENT = existsSync(CHROMIUM);
export const CHROMIUM_MISSING = `${CHROMIUM} is missing: run scripts/test-setup.d/50-chromium.sh (or npm test) to install Debian's chromium`;

const REPO = join(import.meta.dirname, '../..');

/** Screenshots of the pages a test visited: all under a temp dir, the README's in docs/ui/. */
export class Screenshots {
  readonly dir = mkdtempSync(join(tmpdir(), 'kiln-ui-screenshots-'));

  constructor() {
    // Kept after the test, for a look at what the browser showed.
    onTestFinished(() => void process.stderr.write(`web UI screenshots: ${this.dir}\n`));
  }

  /**
   * Takes a full-page screenshot as NAME.png under the temp dir; `forReadme`: also docs/ui/NAME.png,
   * written when it is missing or with KILN_UPDATE_SCREENSHOTS=1 (as golden files are refreshed), so
   * an ordinary run leaves the checkout as it was.
   */
  async take(page: Page, name: string, forReadme = false): Promise<string> {
    const path = join(this.dir, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
    if (forReadme) {
      const docs = join(REPO, 'docs/ui');
      const target = join(docs, `${name}.png`);
      if (process.env['KILN_UPDATE_SCREENSHOTS'] === '1' || !existsSync(target)) {
        mkdirSync(docs, { recursive: true });
        copyFileSync(path, target);
      }
    }
    return path;
  }
}

/** Headless chromium, closed when the test ends. */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  onTestFinished(() => browser.close());
  return browser;
}

/** The UI's URL, `http://HOST:PORT/`, from the cluster's log. */
export function uiUrlOf(log: string): string {
  const m = /web UI: (http:\/\/\S+\/)/.exec(log);
  if (!m) throw new Error(`the cluster logged no web UI URL:\n${log}`);
  return m[1]!;
}
