import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace, filesBelow } from '../e2e-workspace.js';

// Kiln against Bazel 2.1.0's recorded behaviour (record-bazel.mjs): the exit code, the content of
// the outputs a case names, and Bazel's exact text for each stderr pattern of the case. A failed
// genrule's line is matched in two parts ("Executing genrule //x failed", "(Exit 1)"): present-day
// Bazel, which Kiln follows, writes "failed: (Exit 1): bash failed: ..." where 2.1.0 wrote "failed (Exit 1)".

interface Case {
  readonly args: readonly string[];
  readonly outputs?: readonly string[];
  /**
   * Compare the outputs as sorted lines: Bazel 2.1.0 writes a genquery's result in graph order,
   * present-day Bazel (graphless genquery for the label formats) and Kiln sort it by label.
   */
  readonly sortLines?: boolean;
  readonly stderr?: readonly string[];
}
interface Recorded {
  readonly exitCode: number;
  readonly outputs: Readonly<Record<string, string>>;
  readonly stderrMatches: readonly (readonly string[])[];
}

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = readdirSync(here)
  .filter((f) => f.endsWith('.cases.json'))
  .map((f) => f.slice(0, -'.cases.json'.length));

/** Distinct matches, sorted: Bazel sometimes prints one error twice or in another order. */
function matchesOf(pattern: string, text: string): string[] {
  return [...new Set([...text.matchAll(new RegExp(pattern, 'g'))].map((m) => m[0]))].sort();
}

for (const fixture of fixtures) {
  describe(`build differential: ${fixture}`, () => {
    const cases = JSON.parse(readFileSync(join(here, `${fixture}.cases.json`), 'utf8')) as Case[];
    const recorded = JSON.parse(readFileSync(join(here, `${fixture}.bazel.json`), 'utf8')) as Record<string, Recorded>;
    const files = filesBelow(join(here, fixture));
    for (const c of cases) {
      const key = c.args.join(' ');
      it(key, async () => {
        const bazel = recorded[key];
        expect(bazel, `no recording for '${key}': run record-bazel.mjs`).toBeDefined();
        const ws = new E2eWorkspace(files);
        const [command, ...rest] = c.args;
        // Actions run locally: the sandbox belongs to exec's tests.
        const run = await ws.kiln(command === 'build' ? [command!, '--spawn_strategy=local', ...rest] : [...c.args]);
        expect(run.code, run.stderr).toBe(bazel!.exitCode);
        const lines = (text: string | undefined) => (c.sortLines && text !== undefined ? text.split('\n').sort() : text);
        for (const out of c.outputs ?? []) expect(lines(ws.read(join('kiln-bin', out))), out).toEqual(lines(bazel!.outputs[out]));
        (c.stderr ?? []).forEach((pattern, i) => {
          expect(matchesOf(pattern, run.stderr), run.stderr).toEqual([...new Set(bazel!.stderrMatches[i])].sort());
        });
      });
    }
  });
}
