#!/usr/bin/env node
// Records the reference Bazel's runs of REFERENCE_RUNS on ./workspace into reference-bazel-4.2.3.json,
// which the differential test compares Kiln against (CI never needs Bazel). Run by hand; naming runs
// records only those and keeps the other recordings:
//   node test/e2e/test-command/record-reference.mjs /work/shared/reference-bazel/bazel4 [NAME...]
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REFERENCE_RUNS } from './reference-runs.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const [bazel, ...only] = process.argv.slice(2);
if (!bazel) throw new Error('usage: record-reference.mjs PATH_TO_bazel4 [NAME...]');
const recordingsPath = join(here, 'reference-bazel-4.2.3.json');
const kept = only.length > 0 && existsSync(recordingsPath) ? JSON.parse(readFileSync(recordingsPath, 'utf8')) : [];
const root = mkdtempSync(join(tmpdir(), 'kiln-ref-bazel-'));
const env = { ...process.env, KILN_REF_BAZEL_ROOT: join(root, 'user-root') };
const records = [];
try {
  for (const run of REFERENCE_RUNS) {
    if (only.length > 0 && !only.includes(run.name)) {
      const old = kept.find((r) => r.name === run.name);
      if (old) records.push(old);
      continue;
    }
    const tmp = mkdtempSync(join(root, 'tmp-'));
    const ws = join(tmp, 'ws');
    cpSync(join(here, 'workspace'), ws, { recursive: true });
    const args = run.args.map((a) => a.replaceAll('$TMP', tmp));
    const [command, ...rest] = args;
    const flags = command === 'query' ? [] : ['--color=no', '--curses=no'];
    let result;
    for (let i = 0; i < (run.repeat ?? 1); i++) {
      result = spawnSync(bazel, [command, ...flags, ...rest], { cwd: ws, env, encoding: 'utf8' });
    }
    records.push({ name: run.name, exitCode: result.status, stdout: result.stdout.replaceAll(tmp, '$TMP'), stderr: result.stderr.replaceAll(tmp, '$TMP') });
    spawnSync(bazel, ['shutdown'], { cwd: ws, env });
    process.stderr.write(`${run.name}: exit ${result.status}\n`);
  }
} finally {
  writeFileSync(recordingsPath, `${JSON.stringify(records, null, 1)}\n`);
  spawnSync('chmod', ['-R', 'u+w', root]);
  rmSync(root, { recursive: true, force: true });
}
