import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isKilnError } from '../../src/core/index.js';
import {
  chooseStrategy,
  dynamicBranchStrategies,
  executeActions,
  parseDynamicStrategies,
  parseMnemonicStrategy,
  parseStrategyList,
  type ExecutionOptions,
  type StrategyFlags,
} from '../../src/exec/index.js';
import type { ExecutionRequirement } from '../../src/actions/index.js';
import { genrule, makeWorkspace, out, RecordingReporter, type Workspace } from './fixtures.js';

/** The message of the KilnError `f` throws. */
function usageError(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(isKilnError(e)).toBe(true);
    return (e as Error).message;
  }
  throw new Error('expected an error');
}

describe('strategy flags', () => {
  it('parses Bazel names and aliases in order of preference', () => {
    expect(parseStrategyList('sandboxed,local', '--spawn_strategy')).toEqual(['sandboxed', 'local']);
    expect(parseStrategyList('linux-sandbox,standalone', '--spawn_strategy')).toEqual(['sandboxed', 'local']);
    expect(parseMnemonicStrategy('Genrule=local')).toEqual(['Genrule', ['local']]);
  });

  it('parses remote, and rejects unknown names, naming the flag', () => {
    expect(parseStrategyList('remote,sandboxed,local', '--spawn_strategy')).toEqual(['remote', 'sandboxed', 'local']);
    expect(usageError(() => parseStrategyList('worker', '--genrule_strategy'))).toMatch(/^--genrule_strategy: unknown strategy 'worker'/);
    expect(usageError(() => parseMnemonicStrategy('local'))).toMatch(/expected Mnemonic=strategy/);
  });
});

describe('--dynamic_local_strategy and --dynamic_remote_strategy', () => {
  it('default to sandboxed and remote', () => {
    expect(parseDynamicStrategies([], 'local')).toBeUndefined();
    expect(dynamicBranchStrategies({}, 'local', 'Genrule')).toEqual(['sandboxed']);
    expect(dynamicBranchStrategies({}, 'remote', 'Genrule')).toEqual(['remote']);
  });

  it('accumulate repeated flags: a bare list is the fallback, a mnemonic entry wins for its mnemonic, a later entry replaces an earlier one', () => {
    const local = parseDynamicStrategies(['sandboxed', 'Genrule=local,sandboxed', 'TestRunner=linux-sandbox', 'TestRunner=standalone'], 'local');
    expect(local).toEqual({ fallback: ['sandboxed'], byMnemonic: { Genrule: ['local', 'sandboxed'], TestRunner: ['local'] } });
    const flags: StrategyFlags = { dynamicLocal: local! };
    expect(dynamicBranchStrategies(flags, 'local', 'Genrule')).toEqual(['local', 'sandboxed']);
    expect(dynamicBranchStrategies(flags, 'local', 'TestRunner')).toEqual(['local']);
    expect(dynamicBranchStrategies(flags, 'local', 'CppCompile')).toEqual(['sandboxed']);
    // Without a fallback entry, other mnemonics keep the default.
    expect(dynamicBranchStrategies({ dynamicLocal: parseDynamicStrategies(['Genrule=local'], 'local')! }, 'local', 'Javac')).toEqual(['sandboxed']);
    expect(parseDynamicStrategies(['remote', 'Genrule=remote'], 'remote')).toEqual({ fallback: ['remote'], byMnemonic: { Genrule: ['remote'] } });
  });

  it('reject unknown strategies and strategies of the other branch, naming the flag and value', () => {
    expect(usageError(() => parseDynamicStrategies(['worker'], 'local'))).toBe(
      "--dynamic_local_strategy=worker: 'worker' is not a local strategy of dynamic execution; valid values are 'sandboxed' (alias 'linux-sandbox') and 'local' (alias 'standalone')",
    );
    expect(usageError(() => parseDynamicStrategies(['Genrule=sandboxed,remote'], 'local'))).toMatch(
      /^--dynamic_local_strategy=Genrule=sandboxed,remote: 'remote' is not a local strategy/,
    );
    expect(usageError(() => parseDynamicStrategies(['sandboxed'], 'remote'))).toBe(
      "--dynamic_remote_strategy=sandboxed: 'sandboxed' is not a remote strategy of dynamic execution; valid values are 'remote'",
    );
    expect(usageError(() => parseDynamicStrategies(['dynamic'], 'remote'))).toMatch(/'dynamic' is not a remote strategy/);
    expect(usageError(() => parseDynamicStrategies(['=local'], 'local'))).toMatch(/the mnemonic is empty/);
    expect(usageError(() => parseDynamicStrategies(['Genrule='], 'local'))).toMatch(/'' is not a local strategy/);
  });
});

describe('chooseStrategy with a remote executor', () => {
  const tagged = (...tags: ExecutionRequirement[]) => genrule('//p:a', { outs: ['a'], cmd: 'true', requirements: tags });
  const chosen = (action: ReturnType<typeof tagged>, flags: StrategyFlags, canSandbox = true, canRemote = true) => {
    const choice = chooseStrategy(action, flags, canSandbox, canRemote);
    return choice.kind === 'chosen' ? choice.strategy : choice.message;
  };

  it('defaults to remote when an executor is configured, to sandboxed otherwise', () => {
    expect(chosen(tagged(), {})).toBe('remote');
    expect(chosen(tagged(), {}, true, false)).toBe('sandboxed');
  });

  it('pins tagged actions: no-remote and no-remote-exec to the next strategy, local to local', () => {
    expect(chosen(tagged('no-remote'), {})).toBe('sandboxed');
    expect(chosen(tagged('no-remote-exec'), {})).toBe('sandboxed');
    expect(chosen(tagged('local'), {})).toBe('local');
    expect(chosen(tagged('no-remote-exec'), { spawnStrategy: ['remote'] })).toBe('local');
    expect(chosen(tagged('no-remote-cache'), { spawnStrategy: ['remote'] })).toBe('remote');
  });

  it('takes the first usable entry of --strategy=Mnemonic=remote,sandboxed', () => {
    expect(chosen(tagged(), { strategyByMnemonic: { Genrule: ['remote', 'sandboxed'] }, spawnStrategy: ['local'] })).toBe('remote');
    expect(chosen(tagged(), { strategyByMnemonic: { Genrule: ['remote', 'sandboxed'] } }, true, false)).toBe('sandboxed');
  });

  it('says remote and dynamic execution need --remote_executor when only they were asked', () => {
    expect(chosen(tagged(), { spawnStrategy: ['remote'] }, true, false)).toMatch(
      /'remote' was requested and remote and dynamic execution need --remote_executor/,
    );
    expect(chosen(tagged(), { spawnStrategy: ['dynamic'] }, true, false)).toMatch(/'dynamic' was requested/);
  });

  it('offers dynamic like remote: tags that rule remote out pin the action to local', () => {
    expect(chosen(tagged(), { spawnStrategy: ['dynamic'] })).toBe('dynamic');
    expect(chosen(tagged('no-remote-exec'), { spawnStrategy: ['dynamic'] })).toBe('local');
    expect(parseStrategyList('dynamic', '--spawn_strategy')).toEqual(['dynamic']);
  });
});

describe('strategy selection when the machine cannot sandbox', () => {
  let ws: Workspace;
  beforeEach(async () => {
    ws = await makeWorkspace();
  });
  afterEach(async () => {
    await ws.cleanup();
  });

  const cannot = { available: false, reason: 'no namespaces in this test' } as const;
  const build = async (
    strategies: StrategyFlags = {},
    actions = [genrule('//p:a', { outs: ['a'], cmd: `touch ${out('p', 'a')}` }), genrule('//p:b', { outs: ['b'], cmd: `touch ${out('p', 'b')}` })],
  ) => {
    const reporter = new RecordingReporter();
    const options: ExecutionOptions = {
      execRoot: ws.execRoot,
      outputBase: ws.outputBase,
      clientEnv: { PATH: process.env.PATH },
      strategies,
      sandbox: cannot,
      jobs: 1,
    };
    const summary = await executeActions(actions, options, reporter);
    return { summary, reporter };
  };

  it('uses local silently by default (sandboxed,local)', async () => {
    const { summary, reporter } = await build(undefined);
    expect(summary.processes.local).toBe(2);
    expect(reporter.warnings).toEqual([]);
  });

  it('fails an explicit --spawn_strategy=sandboxed with the reason, unless --sandbox_fallback', async () => {
    const strict = await build({ spawnStrategy: ['sandboxed'] });
    expect(strict.summary.success).toBe(false);
    expect(strict.summary.failures[0]!.message).toContain('no usable spawn strategy for Genrule action of //p:a');
    expect(strict.summary.failures[0]!.message).toContain('no namespaces in this test');

    const fallback = await build({ spawnStrategy: ['sandboxed'], sandboxFallback: true });
    expect(fallback.summary.success).toBe(true);
    expect(fallback.summary.processes.local).toBe(2);
    expect(fallback.reporter.warnings).toHaveLength(1); // said once, not per action
    expect(fallback.reporter.warnings[0]).toContain('cannot sandbox actions (no namespaces in this test)');
  });

  it('prefers --strategy=<mnemonic> over --genrule_strategy over --spawn_strategy; local tags force local', async () => {
    expect((await build({ spawnStrategy: ['sandboxed'], genruleStrategy: ['local'] })).summary.processes.local).toBe(2);
    expect((await build({ genruleStrategy: ['sandboxed'], strategyByMnemonic: { Genrule: ['local'] } })).summary.success).toBe(true);
    const tagged = [
      genrule('//p:t', { outs: ['t'], cmd: `touch ${out('p', 't')}`, requirements: ['local'] }),
      genrule('//p:n', { outs: ['n'], cmd: `touch ${out('p', 'n')}`, requirements: ['no-sandbox'] }),
    ];
    expect((await build({ spawnStrategy: ['sandboxed'] }, tagged)).summary.processes.local).toBe(2);
  });
});
