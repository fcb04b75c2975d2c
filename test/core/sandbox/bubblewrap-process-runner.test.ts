import { describe, expect, it } from 'vitest';
import { BubblewrapProcessRunner, LocalProcessRunner, detectSandboxSupport } from '../../../src/core/sandbox/index.js';
import { processRunnerCases } from './process-runner-cases.js';
import { sandboxRunnerCases } from './sandbox-runner-cases.js';
import { needTool } from '../../setup/need-tool.js';

const support = await detectSandboxSupport();
needTool('bubblewrap', support.available, `${support.available ? '' : support.reason} (run scripts/test-setup.d/10-bubblewrap.sh)`);

describe.skipIf(!support.available)('BubblewrapProcessRunner', () => {
  const bwrapPath = support.available ? support.bwrapPath : '';
  processRunnerCases(() => new BubblewrapProcessRunner({ bwrapPath }));

  sandboxRunnerCases((options) => new BubblewrapProcessRunner({ bwrapPath, ...options }));

  it('refuses a tree for a process on the host', async () => {
    await expect(new LocalProcessRunner().run({ argv: ['true'], cwd: '/', env: {}, tree: { mounts: [], dirs: [], symlinks: [] } })).rejects.toThrow(
      'a process on the host cannot have a sandbox tree',
    );
  });
});

describe('detectSandboxSupport', () => {
  it('explains why when bwrap is missing', async () => {
    const r = await detectSandboxSupport({ env: { PATH: '/nonexistent' } });
    expect(r).toEqual({ available: false, reason: expect.stringContaining('bubblewrap (bwrap) is not installed') });
  });

  it('explains why when bwrap cannot run', async () => {
    const r = await detectSandboxSupport({ bwrapPath: '/bin/false' });
    expect(r.available).toBe(false);
    if (!r.available) expect(r.reason).toContain('/bin/false cannot create namespaces');
  });
});
