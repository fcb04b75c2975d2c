import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { main } from '../../src/cli/commands/query.js';
import type { CliIO } from '../../src/cli/io.js';
import { workspaceFixture } from '../loading/fixture.js';

const HERE = dirname(fileURLToPath(import.meta.url));

// golden/all-rules.build.txt is Bazel 2.1.0's `query --output=build //p:all` of golden/all-rules.BUILD
// (with the workspace path replaced by ROOT): attribute order, canonical labels, dict and select
// printing, and the output order all come from that run.
it('prints --output=build exactly as Bazel 2.1.0', async () => {
  const root = workspaceFixture({ WORKSPACE: '', 'p/BUILD': readFileSync(join(HERE, 'golden/all-rules.BUILD'), 'utf8') });
  let out = '';
  const io: CliIO = { stdout: { write: (c) => (out += String(c)) }, stderr: { write: () => true }, cwd: root, env: {} };
  expect(await main([`--output_base=${join(root, '.ob')}`, '--output=build', '//p:all'], io)).toBe(0);
  expect(out).toBe(readFileSync(join(HERE, 'golden/all-rules.build.txt'), 'utf8').replaceAll('ROOT', root));
});
