import type { Action, DerivedArtifact } from '../../actions/index.js';
import { executionRequirementsFromTags, type ExecutionRequirement } from '../../actions/index.js';
import type { ConfiguredTarget, RuleAnalysisTarget } from '../configured/configured-target.js';
import { ruleError } from '../configured/rule-context.js';
import { packageOutputDir, targetNameOf } from '../configured/target-paths.js';
import { programOf, runfilesTree } from './runfiles-tree.js';
import { TEST_SETUP_SCRIPT } from './test-setup-script.js';

/** Bazel's timeouts in seconds, by name, and the timeout each size implies. */
export const TEST_TIMEOUTS: Readonly<Record<string, number>> = { short: 60, moderate: 300, long: 900, eternal: 3600 };
const TIMEOUT_OF_SIZE: Readonly<Record<string, string>> = { small: 'short', medium: 'moderate', large: 'long', enormous: 'eternal' };
const TIMEOUT_NAMES = ['short', 'moderate', 'long', 'eternal'];

/** What the test flags of a command line ask of every test action. */
export interface TestSettings {
  /** `--test_arg`, after the rule's `args`. */
  readonly args: readonly string[];
  /** `--test_env`, resolved (a bare NAME takes the client's value); over the rule's `env`. */
  readonly env: Readonly<Record<string, string>>;
  /** `--test_filter`, as TESTBRIDGE_TEST_ONLY. */
  readonly filter: string;
  /** `--test_timeout`: one value for all, four by timeout name, or none (-1). */
  readonly timeouts: readonly number[];
  readonly runsPerTest: number;
  /** `--test_sharding_strategy=disabled`. */
  readonly shardingDisabled: boolean;
  /** `--cache_test_results`: `no` (and `auto` with several runs) never takes a cached result. */
  readonly cacheResults: 'auto' | 'yes' | 'no';
  /** The main repository's name: the runfiles tree's top directory and TEST_WORKSPACE. */
  readonly workspaceName: string;
  /** `--run_under`'s command and options: the words the test binary runs under. */
  readonly runUnder?: readonly string[];
}

/** One run of one shard of a test: one action, its log directory. */
export interface TestRun {
  /** 0-based; undefined when the test is not sharded. */
  readonly shard?: number;
  /** 0-based run (of `--runs_per_test`). */
  readonly run: number;
  /** `bazel-out/<config>/testlogs/pkg/name[/shard_1_of_3][_run_1_of_2]`. */
  readonly logDir: string;
  readonly action: Action;
}

/** A test target as `kiln test` runs it. */
export interface TestTarget {
  readonly label: string;
  readonly size: string;
  /** The timeout name (`short`...): set, or implied by the size. */
  readonly timeout: string;
  readonly timeoutSeconds: number;
  readonly flaky: boolean;
  /** 0 when not sharded. */
  readonly shardCount: number;
  readonly tags: readonly string[];
  /** `env_inherit`: names whose values the test takes from the client's environment when it runs. */
  readonly envInherit: readonly string[];
  readonly runs: readonly TestRun[];
  /** The runfiles tree's action (the test's executable and data as the test sees them). */
  readonly runfilesAction: Action;
}

/**
 * The actions of a configured test rule under `settings`: its runfiles tree and one test action per
 * shard and run (Bazel's TestActionBuilder). Each test action reads the runfiles tree, runs the
 * test setup script and writes its log directory; it is an ordinary action, keyed and cached like
 * any other (`no-cache` when results may not be reused), whose non-zero exit is a test result.
 */
export function testTargetOf(ct: ConfiguredTarget, settings: TestSettings): TestTarget {
  const target = ct.target as RuleAnalysisTarget;
  const attr = <T>(name: string, fallback: T): T => (target.attrs.has(name) ? (target.attrs.get(name) as T) : fallback);
  const size = attr<string>('size', 'medium');
  const declaredTimeout = attr<string | null>('timeout', null);
  const timeout = declaredTimeout ?? TIMEOUT_OF_SIZE[size] ?? 'moderate';
  const timeoutSeconds = timeoutFor(timeout, settings.timeouts);
  const flaky = attr<boolean>('flaky', false) === true;
  const shardAttr = attr<number>('shard_count', -1);
  if (shardAttr > 50) throw ruleError(target, 'shard_count', 'cannot exceed 50');
  const shardCount = settings.shardingDisabled || shardAttr <= 1 ? 0 : shardAttr;
  const tags = attr<readonly string[]>('tags', []);
  const executable = programOf(ct);
  if (executable?.artifact.kind !== 'derived') throw ruleError(target, undefined, 'a test rule must have an executable output');
  const tree = runfilesTree(executable, ct.runfiles, settings.workspaceName, ct.label, ct.config.options.getBool('legacy_external_runfiles'));

  // Expanded by the rule where it knows how ($(location), Make variables), else as written.
  const run = ct.runEnvironment ?? { args: attr<readonly string[]>('args', []), env: attr<readonly (readonly [string, string])[]>('env', []) };
  const ruleEnv = Object.fromEntries(run.env);
  const args = [...run.args, ...settings.args];
  const baseDir = `${packageOutputDir(ct.config.outputDirectories.testlogs, ct.label)}/${targetNameOf(ct.label)}`;
  const requirements = new Set<ExecutionRequirement>(executionRequirementsFromTags(tags));
  if (attr<boolean>('local', false) === true) requirements.add('local');
  // testing.ExecutionInfo returned by a Starlark test rule.
  for (const r of executionRequirementsFromTags(run.executionRequirements ?? [])) requirements.add(r);
  const runs = Math.max(1, settings.runsPerTest);
  const reuseResults = settings.cacheResults === 'yes' || (settings.cacheResults === 'auto' && runs === 1 && !tags.includes('external'));
  if (!reuseResults) requirements.add('no-cache');

  const runUnder = settings.runUnder ?? [];
  const testRuns: TestRun[] = [];
  for (let shard = 0; shard < Math.max(1, shardCount); shard++) {
    for (let run = 0; run < runs; run++) {
      const parts = [...(shardCount > 0 ? [`shard_${shard + 1}_of_${shardCount}`] : []), ...(runs > 1 ? [`run_${run + 1}_of_${runs}`] : [])];
      const logDir = parts.length > 0 ? `${baseDir}/${parts.join('_')}` : baseDir;
      const output = (name: string): DerivedArtifact => ({
        kind: 'derived',
        execPath: `${logDir}/${name}`,
        root: ct.config.outputDirectories.testlogs,
        owner: ct.label,
      });
      const env: Record<string, string> = {
        ...ruleEnv,
        ...settings.env,
        TEST_TARGET: ct.label,
        TEST_WORKSPACE: settings.workspaceName,
        TEST_BINARY: executable.rootPath,
        TEST_SIZE: size,
        TEST_TIMEOUT: String(timeoutSeconds),
        TZ: 'UTC',
        KILN_RUNFILES_DIR: tree.dir,
        ...(shardCount > 0 ? { TEST_TOTAL_SHARDS: String(shardCount), TEST_SHARD_INDEX: String(shard) } : {}),
        ...(settings.filter ? { TESTBRIDGE_TEST_ONLY: settings.filter } : {}),
      };
      const action: Action = {
        owner: ct.label,
        location: target.location,
        mnemonic: 'TestRunner',
        progressMessage: `Testing ${ct.label}${describeRun(shardCount, shard, runs, run)}`,
        argv: ['/bin/bash', '-c', TEST_SETUP_SCRIPT, 'kiln-test-setup', logDir, String(timeoutSeconds), String(runUnder.length), ...runUnder, ...args],
        env,
        inputs: tree.files,
        outputs: [output('test.log'), output('test.xml'), output('test.outputs/outputs.zip'), output('test.status')],
        executionRequirements: [...requirements].sort(),
        executableOutputs: false,
        exitCodeIsResult: true,
        // Sent as the REAPI Action's timeout, so a remote server enforces it too (as Bazel's test spawns do).
        timeoutSeconds,
      };
      testRuns.push({ ...(shardCount > 0 ? { shard } : {}), run, logDir, action });
    }
  }
  const envInherit = [...attr<readonly string[]>('env_inherit', []), ...(run.inherited ?? [])];
  return { label: ct.label, size, timeout, timeoutSeconds, flaky, shardCount, tags, envInherit, runs: testRuns, runfilesAction: tree.action };
}

/** `--test_timeout`: one value for every test, or one per timeout name; -1 keeps the default. */
function timeoutFor(name: string, overrides: readonly number[]): number {
  const index = TIMEOUT_NAMES.indexOf(name);
  const override = overrides.length === 1 ? overrides[0]! : overrides.length === 4 ? overrides[index]! : -1;
  return override > 0 ? override : TEST_TIMEOUTS[name]!;
}

function describeRun(shards: number, shard: number, runs: number, run: number): string {
  const parts = [...(shards > 0 ? [`shard ${shard + 1} of ${shards}`] : []), ...(runs > 1 ? [`run ${run + 1} of ${runs}`] : [])];
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}
