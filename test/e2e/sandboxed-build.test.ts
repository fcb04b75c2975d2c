import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace } from './e2e-workspace.js';

// The sandbox itself is tested by exec; this checks the CLI wires --spawn_strategy=sandboxed
// through. bubblewrap comes from scripts/test-setup.d; without it (outside CI) the case is skipped.
const HAS_BWRAP = spawnSync('bwrap', ['--version']).status === 0;

describe('kiln build --spawn_strategy=sandboxed', () => {
  it.skipIf(!HAS_BWRAP && process.env.CI !== 'true')('hides an undeclared input that the local strategy sees', async () => {
    const ws = new E2eWorkspace({
      WORKSPACE: '',
      'pkg/secret.txt': 'undeclared\n',
      'pkg/BUILD': 'genrule(name = "peek", outs = ["peek.txt"], cmd = "cat pkg/secret.txt > $@ || echo hidden > $@")\n',
    });
    const sandboxed = await ws.kiln(['build', '--spawn_strategy=sandboxed', '//pkg:peek']);
    expect(sandboxed.code, sandboxed.stderr).toBe(0);
    expect(sandboxed.stderr).toContain('1 linux-sandbox');
    expect(ws.read('kiln-bin/pkg/peek.txt')).toBe('hidden\n');
    // The strategy is not part of the action key: clean, then run locally.
    expect((await ws.kiln(['clean'])).code).toBe(0);
    const local = await ws.kiln(['build', '--spawn_strategy=local', '//pkg:peek']);
    expect(local.code, local.stderr).toBe(0);
    expect(ws.read('kiln-bin/pkg/peek.txt')).toBe('undeclared\n');
  });
});
