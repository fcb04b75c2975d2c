#!/usr/bin/env node
// Records Bazel 4.2.3's `query //...` in each of Debian's packaged rule sets (bazel-platforms,
// bazel-rules-java, bazel-rules-cc, bazel-rules-proto; each a copy of the package's tree with the
// WORKSPACE rule-sets.mjs gives it) into test/rule-sets/fixtures/rule-set-queries-bazel-4.2.3.json:
// the sorted labels, or, where Bazel cannot answer offline, its exit code and first error.
//
//   node scripts/rule-sets/record-rule-set-queries.mjs /work/shared/reference-bazel/bazel4
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RULE_SETS, setUpRuleSet } from './rule-sets.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const bazel4 = process.argv[2];
if (!bazel4) throw new Error('usage: record-rule-set-queries.mjs PATH/TO/bazel4');
const work = mkdtempSync(join(tmpdir(), 'rule-set-queries-'));
const results = {};
for (const [name, { source }] of Object.entries(RULE_SETS)) {
  const ws = join(work, name);
  setUpRuleSet(name, ws);
  const env = { ...process.env, KILN_REF_BAZEL_ROOT: join(work, 'root') };
  const run = spawnSync(bazel4, ['query', '//...'], { cwd: ws, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  spawnSync(bazel4, ['shutdown'], { cwd: ws, env });
  const pkg = execFileSync('dpkg-query', ['-S', source], { encoding: 'utf8' }).split(':')[0];
  const version = `${pkg} ${execFileSync('dpkg-query', ['-W', '-f=${Version}', pkg], { encoding: 'utf8' })}`;
  // Sorted: Bazel loads packages in parallel, so the order of its errors varies.
  const errors = [...new Set(run.stderr.split('\n').filter((l) => l.startsWith('ERROR:')))].sort();
  results[name] =
    run.status === 0
      ? { package: version, query: run.stdout.split('\n').filter(Boolean).sort() }
      : { package: version, exitCode: run.status, errors: errors.length === 0 ? [run.stderr.trim()] : errors };
  console.log(`${name}: ${run.status === 0 ? `${results[name].query.length} labels` : `exit ${run.status}: ${results[name].errors.join('\n  ')}`}`);
}
rmSync(work, { recursive: true, force: true });
writeFileSync(join(repo, 'test', 'rule-sets', 'fixtures', 'rule-set-queries-bazel-4.2.3.json'), `${JSON.stringify(results, null, 2)}\n`);
