#!/usr/bin/env node
// Records what Bazel 2.1.0 does for every case of the fixtures named on the command line (all when
// none) into <fixture>.bazel.json beside the cases: the exit code, the content of the outputs the
// case names (under bazel-bin), and every match of the case's stderr patterns. differential.test.ts
// compares Kiln with these recordings, so CI needs no Bazel.
//
//   KILN_BAZEL=/path/to/bazel-2.1.0 node test/e2e/differential/record-bazel.mjs [fixture...]
//
// Each fixture runs offline in a temp copy with its own --output_user_root (also a temp dir), in
// --batch mode so no server outlives the run.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeBazelTree } from '../../setup/remove-bazel-tree.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const bazel = process.env.KILN_BAZEL ?? join(here, '../../../.cache/bazel/2.1.0/bazel');
const fixtures =
  process.argv.length > 2
    ? process.argv.slice(2)
    : readdirSync(here)
        .filter((f) => f.endsWith('.cases.json'))
        .map((f) => f.slice(0, -'.cases.json'.length));

for (const fixture of fixtures) {
  const cases = JSON.parse(readFileSync(join(here, `${fixture}.cases.json`), 'utf8'));
  const work = mkdtempSync(join(tmpdir(), `kiln-bazel-${fixture}-`));
  const workspace = join(work, 'ws');
  const userRoot = join(work, 'root');
  cpSync(join(here, fixture), workspace, { recursive: true });
  const recorded = {};
  try {
    for (const c of cases) {
      const [command, ...rest] = c.args;
      const r = spawnSync(bazel, [`--output_user_root=${userRoot}`, '--batch', command, '--noshow_progress', ...rest], { cwd: workspace, timeout: 300_000 });
      if (r.error) throw new Error(`${bazel}: ${r.error.message}`);
      const stderr = r.stderr.toString('utf8');
      const outputs = {};
      if (c.outputs && r.status !== 0) throw new Error(`${c.args.join(' ')} failed:\n${stderr}`);
      for (const out of c.outputs ?? []) outputs[out] = readFileSync(join(workspace, 'bazel-bin', out), 'utf8');
      const stderrMatches = (c.stderr ?? []).map((pattern) => [...stderr.matchAll(new RegExp(pattern, 'g'))].map((m) => m[0]));
      for (const [i, found] of stderrMatches.entries())
        if (found.length === 0) throw new Error(`${c.args.join(' ')}: no match for ${c.stderr[i]} in\n${stderr}`);
      recorded[c.args.join(' ')] = { exitCode: r.status, outputs, stderrMatches };
      process.stderr.write(`${fixture}: ${c.args.join(' ')} -> ${r.status}\n`);
    }
  } finally {
    removeBazelTree(work);
  }
  writeFileSync(join(here, `${fixture}.bazel.json`), `${JSON.stringify(recorded, null, 2)}\n`);
}
