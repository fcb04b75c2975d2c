import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalProcessRunner } from '../../../src/core/sandbox/index.js';
import { processRunnerCases } from './process-runner-cases.js';

describe('LocalProcessRunner', () => {
  processRunnerCases(() => new LocalProcessRunner());

  it('ends with 127 and a reason when the program does not exist', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiln-runner-'));
    try {
      const r = await new LocalProcessRunner().run({
        argv: ['kiln-no-such-program'],
        cwd: dir,
        env: { PATH: '/usr/bin:/bin' },
        stderr: { kind: 'buffer', limitBytes: 1000 },
      });
      expect(r.exitCode).toBe(127);
      expect(r.stderr.toString()).toContain("cannot run 'kiln-no-such-program'");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
