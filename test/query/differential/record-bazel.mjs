#!/usr/bin/env node
// Records Bazel 2.1.0's `bazel query` stdout and exit code for every case of the fixtures named on
// the command line (all when none), into <fixture>.bazel.json beside the cases. The differential test
// (differential.test.ts) compares Kiln with these recordings, so CI needs no Bazel.
//
//   KILN_BAZEL=/path/to/bazel-2.1.0 node test/query/differential/record-bazel.mjs [fixture...]
//   KILN_RECORD_ONLY='--output=proto' ... records only the cases whose key contains that text
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

/** The key of a case in the recordings: its flags and its query (as differential.test.ts computes it). */
function caseKey(c) {
  return [...(c.args ?? []), c.query].join(' ');
}

// Cases given as KEY=... on the environment are recorded alone and merged into the existing recording.
const only = process.env.KILN_RECORD_ONLY;
for (const fixture of fixtures) {
  const all = JSON.parse(readFileSync(join(here, `${fixture}.cases.json`), 'utf8'));
  const cases = only ? all.filter((c) => caseKey(c).includes(only)) : all;
  const work = mkdtempSync(join(tmpdir(), `kiln-bazel-${fixture}-`));
  const workspace = join(work, 'ws');
  const userRoot = join(work, 'root');
  cpSync(join(here, fixture), workspace, { recursive: true });
  const recordingPath = join(here, `${fixture}.bazel.json`);
  const recorded = only ? JSON.parse(readFileSync(recordingPath, 'utf8')) : {};
  try {
    for (const c of cases) {
      const r = spawnSync(bazel, [`--output_user_root=${userRoot}`, '--batch', 'query', '--noshow_progress', ...(c.args ?? []), c.query], {
        cwd: workspace,
        timeout: 300_000,
      });
      if (r.error) throw new Error(`${bazel}: ${r.error.message}`);
      // Binary outputs (proto) are kept as base64; in text, paths of the temp copy become %WORKSPACE%
      // so the recording does not depend on where it ran.
      recorded[caseKey(c)] = c.binary
        ? { stdoutBase64: r.stdout.toString('base64'), exitCode: r.status }
        : { stdout: r.stdout.toString('utf8').replaceAll(workspace, '%WORKSPACE%'), exitCode: r.status };
      process.stderr.write(`${fixture}: ${caseKey(c)} -> ${r.status}\n`);
    }
  } finally {
    removeBazelTree(work);
  }
  writeFileSync(recordingPath, `${JSON.stringify(recorded, null, 2)}\n`);
}
