import { describe, expect, it } from 'vitest';
import { detectSandboxSupport } from '../../../src/core/index.js';
import { LocalRunner } from '../../../executor/runners/local-runner.js';
import { runnerCases } from './runner-cases.js';

const support = await detectSandboxSupport();
if (!support.available && process.env.CI === 'true') {
  throw new Error(`the namespace sandbox must be available under CI: ${support.reason}`);
}
if (!support.available) console.warn(`local runner tests run without the sandbox: ${support.reason} (run scripts/test-setup.d/10-bubblewrap.sh)`);

describe.skipIf(!support.available)('LocalRunner in the namespace sandbox', async () => {
  const runner = await LocalRunner.create({ log: (m) => expect.fail(`unexpected fallback: ${m}`) });
  it('uses the sandbox', () => expect(runner.name).toBe('linux-sandbox'));
  runnerCases(() => runner, { confines: true });
});

describe('LocalRunner as a plain process', async () => {
  const runner = await LocalRunner.create({ sandbox: 'off' });
  it('is the local runner', () => expect(runner.name).toBe('local'));
  runnerCases(() => runner, { confines: false });
});

describe('LocalRunner.create', () => {
  it('says once why it runs without a sandbox', async () => {
    const messages: string[] = [];
    const previous = process.env.KILN_BWRAP;
    process.env.KILN_BWRAP = '/bin/false';
    try {
      const runner = await LocalRunner.create({ log: (m) => messages.push(m) });
      expect(runner.name).toBe('local');
    } finally {
      if (previous === undefined) delete process.env.KILN_BWRAP;
      else process.env.KILN_BWRAP = previous;
    }
    expect(messages).toEqual([expect.stringContaining('running actions without a sandbox: /bin/false cannot create namespaces')]);
  });
});
