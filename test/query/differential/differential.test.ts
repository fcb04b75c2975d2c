/**
 * Differential tests against Bazel 2.1.0: every case of <fixture>.cases.json runs through `kiln query`
 * on a temp copy of the fixture and must print exactly what `bazel query` printed, as recorded in
 * <fixture>.bazel.json by record-bazel.mjs (so CI needs no Bazel). A case where Kiln differs on
 * purpose carries a `reason`, and a `compare` mode says what still has to agree: `sorted` (the same
 * lines in any order) or `ignoreLines` (a regexp of lines only Bazel prints). Recorded paths of the
 * workspace read %WORKSPACE%.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/commands/query.js';
import type { CliIO } from '../../../src/cli/io.js';

interface Case {
  readonly query: string;
  readonly args?: readonly string[];
  readonly reason?: string;
  readonly compare?: 'sorted';
  readonly ignoreLines?: string;
}

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = readdirSync(here)
  .filter((f) => f.endsWith('.cases.json'))
  .map((f) => f.slice(0, -'.cases.json'.length));
const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

async function kilnQuery(root: string, args: readonly string[]): Promise<{ stdout: string; exitCode: number; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CliIO = { stdout: { write: (c) => (stdout += String(c)) }, stderr: { write: (c) => (stderr += String(c)) }, cwd: root, env: {} };
  const exitCode = await main([`--output_base=${join(root, '..', 'ob')}`, ...args], io);
  return { stdout, exitCode, stderr };
}

for (const fixture of fixtures) {
  describe(`kiln query vs Bazel 2.1.0 on ${fixture}`, () => {
    const cases = JSON.parse(readFileSync(join(here, `${fixture}.cases.json`), 'utf8')) as Case[];
    const recorded = JSON.parse(readFileSync(join(here, `${fixture}.bazel.json`), 'utf8')) as Record<string, { stdout: string; exitCode: number }>;
    let root: string | undefined;
    const workspace = () => {
      if (!root) {
        const dir = mkdtempSync(join(tmpdir(), `kiln-differential-${fixture}-`));
        made.push(dir);
        root = join(dir, 'ws');
        cpSync(join(here, fixture), root, { recursive: true });
      }
      return root;
    };
    for (const c of cases) {
      const key = [...(c.args ?? []), c.query].join(' ');
      it(key, async () => {
        const recording = recorded[key];
        const bazel = recording && { ...recording, stdout: recording.stdout.replaceAll('%WORKSPACE%', workspace()) };
        expect(bazel, `no recording for '${key}': run record-bazel.mjs`).toBeDefined();
        const { stderr, ...kiln } = await kilnQuery(workspace(), [...(c.args ?? []), c.query]);
        if (c.reason === undefined) {
          expect(kiln, stderr).toEqual(bazel);
          return;
        }
        // A recorded difference: what must still agree.
        if (c.compare === 'sorted') {
          expect(kiln.exitCode).toBe(bazel!.exitCode);
          expect(kiln.stdout.split('\n').sort()).toEqual(bazel!.stdout.split('\n').sort());
        } else if (c.ignoreLines !== undefined) {
          const re = new RegExp(c.ignoreLines);
          expect(kiln.exitCode).toBe(bazel!.exitCode);
          expect(kiln.stdout).toBe(bazel!.stdout.split('\n').filter((l) => !re.test(l)).join('\n'));
        } else {
          expect(kiln.exitCode, c.reason).toBe(0);
        }
      });
    }
  });
}
