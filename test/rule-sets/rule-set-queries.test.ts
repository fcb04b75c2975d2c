import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { RULE_SETS, type RuleSet, setUpRuleSet } from '../../scripts/rule-sets/rule-sets.mjs';
import { needTool } from '../setup/need-tool.js';

/**
 * `query //...` in Debian's packaged rule sets, each as its package ships it (its own WORKSPACE),
 * against Bazel 4.2.3's answers recorded by scripts/rule-sets/record-rule-set-queries.mjs. Where
 * Bazel cannot answer offline the recording says why, and there is nothing to compare.
 */
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const KILN = join(REPO, 'bin', 'kiln');
type Recorded = { readonly package: string } & ({ readonly query: string[] } | { readonly exitCode: number; readonly errors: string[] });
const REFERENCE: Record<string, Recorded> = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'rule-set-queries-bazel-4.2.3.json'), 'utf8'));

/**
 * Rule sets where Kiln's answer differs from Bazel 4.2.3's on purpose, and why; each runs as an
 * expected failure, so it shows when that changes.
 */
const KNOWN_GAPS: Readonly<Record<string, string>> = {
  rules_proto:
    'proto/private/native.bzl reads the global proto_common, which present-day Bazel no longer has (Bazel 6 renamed it proto_common_do_not_use): it fails to load there, as in Kiln',
};

const base = mkdtempSync(join(tmpdir(), 'kiln-rule-sets-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function kilnQuery(name: keyof typeof RULE_SETS) {
  const ws = join(base, name);
  setUpRuleSet(name, ws);
  const env = { ...process.env, HOME: join(base, `${name}-home`), KILN_SYSTEM_BAZELRC: '' };
  return spawnSync(KILN, ['query', '//...'], { cwd: ws, env, encoding: 'utf8' });
}

/** `<package> <version>` of the Debian package that installed `path`. */
function installedVersion(path: string): string {
  const pkg = spawnSync('dpkg-query', ['-S', path], { encoding: 'utf8' }).stdout.split(':')[0]!;
  return `${pkg} ${spawnSync('dpkg-query', ['-W', '-f=${Version}', pkg], { encoding: 'utf8' }).stdout}`;
}

describe.skipIf(!needTool('the built kiln (dist/)', existsSync(join(REPO, 'dist', 'bundle', 'kiln.js')), 'npm run build'))(
  "query //... in Debian's rule sets",
  () => {
    for (const [name, { source }] of Object.entries(RULE_SETS) as [keyof typeof RULE_SETS, RuleSet][]) {
      if (!needTool(`Debian's package of ${name}`, existsSync(join(source, 'WORKSPACE')), 'scripts/test-setup.d/50-bazel-rule-sets.sh')) continue;
      const recorded = REFERENCE[name]!;
      if (!('query' in recorded)) {
        // Nothing to compare labels with: Kiln's answer must still be one (labels) or a clear error, never a crash.
        it(`${name}: Bazel 4.2.3 cannot answer offline (exit ${recorded.exitCode}; its errors are in the fixture); Kiln answers or names what stops it`, () => {
          expect(installedVersion(source), 'the recording is of another version of the package').toBe(recorded.package);
          expect(recorded.exitCode).not.toBe(0);
          const run = kilnQuery(name);
          expect(run.stderr).not.toMatch(/FATAL|internal error/);
          if (run.status !== 0) expect(run.stderr).toMatch(/^ERROR: \S+:\d+:\d+: /m);
        });
        continue;
      }
      const test = KNOWN_GAPS[name] ? it.fails : it;
      test(`${name}: the labels Bazel 4.2.3 lists${KNOWN_GAPS[name] ? ` (known gap: ${KNOWN_GAPS[name]})` : ''}`, () => {
        expect(installedVersion(source), 'the recording is of another version of the package: run scripts/rule-sets/record-rule-set-queries.mjs').toBe(
          recorded.package,
        );
        const run = kilnQuery(name);
        expect(run.status, run.stderr).toBe(0);
        expect(run.stdout.split('\n').filter(Boolean).sort()).toEqual(recorded.query);
      });
    }
  },
);
