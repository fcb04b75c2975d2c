/**
 * Differential tests against Bazel 2.1.0: every case of <fixture>.cases.json runs through `kiln query`
 * on a temp copy of the fixture and must print exactly what `bazel query` printed, as recorded in
 * <fixture>.bazel.json by record-bazel.mjs (so CI needs no Bazel). A case where Kiln differs on
 * purpose carries a `reason`, and a `compare` mode says what still has to agree: `sorted` (the same
 * lines in any order), `ignoreLines` (a regexp of lines only Bazel prints) or `proto` (Bazel's bytes
 * decoded with our build.proto: the fields both tools fill must agree). Recorded paths of the
 * workspace read %WORKSPACE%; binary recordings are base64.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/commands/query.js';
import type { CliIO } from '../../../src/cli/io.js';
import { blazeQuery } from '../../../src/core/index.js';

interface Case {
  readonly query: string;
  readonly args?: readonly string[];
  readonly reason?: string;
  readonly compare?: 'sorted' | 'proto';
  readonly ignoreLines?: string;
  /** The output is binary (proto); the recording holds it as base64. */
  readonly binary?: boolean;
}

/**
 * What of a build.proto QueryResult both tools must agree on, by target name (Bazel 2.1 writes proto
 * in hash order; its rule classes have more attributes).
 */
function protoSummary(bytes: Buffer) {
  const name = (t: blazeQuery.Target) => t.rule?.name ?? t.sourceFile?.name ?? t.generatedFile?.name ?? t.packageGroup?.name ?? '';
  const targets = blazeQuery.QueryResult.decode(bytes).target.sort((a, b) => (name(a) < name(b) ? -1 : 1));
  return targets.map((t) => ({
    type: t.type,
    rule: t.rule && {
      name: t.rule.name,
      ruleClass: t.rule.ruleClass,
      ruleInput: t.rule.ruleInput,
      ruleOutput: t.rule.ruleOutput,
      explicit: t.rule.attribute
        .filter((a) => a.explicitlySpecified)
        .map((a) => ({
          name: a.name,
          type: a.type,
          stringValue: a.stringValue,
          stringListValue: a.stringListValue,
          booleanValue: a.booleanValue,
          stringDict: a.stringDictValue,
        }))
        .sort((a, b) => (a.name < b.name ? -1 : 1)),
    },
    sourceFile: t.sourceFile && {
      name: t.sourceFile.name,
      visibility: t.sourceFile.visibilityLabel,
      loads: t.sourceFile.subinclude,
      errors: t.sourceFile.packageContainsErrors,
    },
    generatedFile: t.generatedFile && { name: t.generatedFile.name, generatingRule: t.generatedFile.generatingRule },
    packageGroup: t.packageGroup && {
      name: t.packageGroup.name,
      containedPackage: t.packageGroup.containedPackage,
      included: t.packageGroup.includedPackageGroup,
    },
  }));
}

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = readdirSync(here)
  .filter((f) => f.endsWith('.cases.json'))
  .map((f) => f.slice(0, -'.cases.json'.length));
const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

async function kilnQuery(root: string, args: readonly string[]): Promise<{ stdout: string; bytes: Buffer; exitCode: number; stderr: string }> {
  const chunks: Buffer[] = [];
  let stderr = '';
  const io: CliIO = { stdout: { write: (c) => void chunks.push(Buffer.from(c)) }, stderr: { write: (c) => (stderr += String(c)) }, cwd: root, env: {} };
  const exitCode = await main([`--output_base=${join(root, '..', 'ob')}`, ...args], io);
  const bytes = Buffer.concat(chunks);
  return { stdout: bytes.toString('utf8'), bytes, exitCode, stderr };
}

for (const fixture of fixtures) {
  describe(`kiln query vs Bazel 2.1.0 on ${fixture}`, () => {
    const cases = JSON.parse(readFileSync(join(here, `${fixture}.cases.json`), 'utf8')) as Case[];
    const recorded = JSON.parse(readFileSync(join(here, `${fixture}.bazel.json`), 'utf8')) as Record<
      string,
      { stdout?: string; stdoutBase64?: string; exitCode: number }
    >;
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
        expect(recording, `no recording for '${key}': run record-bazel.mjs`).toBeDefined();
        const { stderr, bytes, ...kiln } = await kilnQuery(workspace(), [...(c.args ?? []), c.query]);
        if (c.compare === 'proto') {
          expect(kiln.exitCode, stderr).toBe(recording!.exitCode);
          expect(protoSummary(bytes)).toEqual(protoSummary(Buffer.from(recording!.stdoutBase64!, 'base64')));
          return;
        }
        const bazel = { exitCode: recording!.exitCode, stdout: recording!.stdout!.replaceAll('%WORKSPACE%', workspace()) };
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
          expect(kiln.stdout).toBe(
            bazel!.stdout
              .split('\n')
              .filter((l) => !re.test(l))
              .join('\n'),
          );
        } else {
          expect(kiln.exitCode, c.reason).toBe(0);
        }
      });
    }
  });
}
