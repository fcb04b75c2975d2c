#!/usr/bin/env node
// Records Bazel 4.2.3's answers on bazel-skylib 1.0.3's own suite (set up by skylib-suite.sh) into
// test/rule-sets/fixtures/skylib-1.0.3-bazel-4.2.3.json: the labels of `query //...` and the status
// of each test target of `test --keep_going //tests/...`. The suite's e2e tests run `bazel` from
// PATH, so a `bazel` that is Bazel 4.2.3 (with the reference script's offline stubs) goes first on it.
//
//   node scripts/rule-sets/record-reference.mjs /work/shared/reference-bazel/bazel4
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const bazel4 = process.argv[2];
if (!bazel4) throw new Error('usage: record-reference.mjs PATH/TO/bazel4');
const work = mkdtempSync(join(tmpdir(), 'skylib-reference-'));
const ws = join(work, 'ws');
const shim = join(work, 'bin');
execFileSync('bash', [join(here, 'skylib-suite.sh'), ws], { stdio: 'inherit' });
execFileSync('mkdir', ['-p', shim]);
writeFileSync(join(shim, 'bazel'), `#!/bin/sh\nexec ${JSON.stringify(bazel4)} "$@"\n`);
chmodSync(join(shim, 'bazel'), 0o755);
const env = { ...process.env, PATH: `${shim}:${process.env.PATH}`, KILN_REF_BAZEL_ROOT: join(work, 'root') };
const run = (args) => spawnSync(bazel4, args, { cwd: ws, env, encoding: 'utf8', maxBuffer: 64 << 20 });

const query = run(['query', '//...']);
if (query.status !== 0) throw new Error(`bazel query failed: ${query.error ?? query.stderr}`);
const labels = query.stdout.split('\n').filter(Boolean).sort();
const test = run(['test', '--keep_going', '//tests/...']);
const tests = {};
for (const m of test.stdout.matchAll(/^(\/\/\S+)\s+(PASSED|FAILED|NO STATUS|FLAKY|TIMEOUT)/gm)) tests[m[1]] = m[2];
run(['shutdown']);
const out = join(repo, 'test', 'rule-sets', 'fixtures', 'skylib-1.0.3-bazel-4.2.3.json');
const version = execFileSync('dpkg-query', ['-W', '-f=${Version}', 'bazel-skylib'], { encoding: 'utf8' });
writeFileSync(
  out,
  `${JSON.stringify({ bazel: '4.2.3', skylibPackage: version, query: labels, testExitCode: test.status, tests: Object.fromEntries(Object.entries(tests).sort()) }, null, 2)}\n`,
);
rm();
console.log(`${out}: ${labels.length} labels, ${Object.keys(tests).length} tests (${Object.values(tests).filter((s) => s === 'PASSED').length} passed)`);

function rm() {
  rmSync(work, { recursive: true, force: true });
}
