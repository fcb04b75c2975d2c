import { UsageError } from '../core/index.js';
import type { Action } from '../actions/index.js';

export type StrategyName = 'local' | 'sandboxed' | 'remote' | 'dynamic';

/** The strategy flags as Bazel spells them. Lists are in order of preference. */
export interface StrategyFlags {
  /** `--spawn_strategy=sandboxed,local`. Unset: remote with --remote_executor, else sandboxed when the machine can, else local. */
  readonly spawnStrategy?: readonly StrategyName[];
  /** `--strategy=Genrule=local` (one entry per mnemonic; a later flag for the same mnemonic wins). */
  readonly strategyByMnemonic?: Readonly<Record<string, readonly StrategyName[]>>;
  /** `--genrule_strategy=...`: the same as `--strategy=Genrule=...`, which takes precedence. */
  readonly genruleStrategy?: readonly StrategyName[];
  /**
   * `--sandbox_fallback` (Bazel: `--incompatible_legacy_local_fallback`): when sandboxing was asked
   * for and the machine cannot sandbox, run locally (with one warning) instead of failing.
   */
  readonly sandboxFallback?: boolean;
  /** `--dynamic_local_strategy`: the strategies dynamic execution races locally (default sandboxed). */
  readonly dynamicLocal?: DynamicBranchFlags;
  /** `--dynamic_remote_strategy`: the strategies dynamic execution races remotely (default remote). */
  readonly dynamicRemote?: DynamicBranchFlags;
}

/** One branch of dynamic execution, as its repeated flag builds it up. */
export interface DynamicBranchFlags {
  /** The entry without a mnemonic: the list of every mnemonic that has none of its own. */
  readonly fallback?: readonly StrategyName[];
  /** `Mnemonic=list` entries (a later entry for the same mnemonic wins). */
  readonly byMnemonic?: Readonly<Record<string, readonly StrategyName[]>>;
}

/** What each branch of the race may run as, and how a usage error lists it. */
const DYNAMIC_BRANCH_STRATEGIES: Readonly<Record<'local' | 'remote', { readonly names: readonly StrategyName[]; readonly valid: string }>> = {
  local: { names: ['sandboxed', 'local'], valid: "'sandboxed' (alias 'linux-sandbox') and 'local' (alias 'standalone')" },
  remote: { names: ['remote'], valid: "'remote'" },
};

const ALIASES: Readonly<Record<string, StrategyName>> = {
  local: 'local',
  standalone: 'local',
  sandboxed: 'sandboxed',
  'linux-sandbox': 'sandboxed',
  remote: 'remote',
  dynamic: 'dynamic',
};

/**
 * Parses a strategy flag value (`remote,sandboxed,local`). `flag` names the flag in errors.
 * @throws UsageError for an unknown or an empty name.
 */
export function parseStrategyList(value: string, flag: string): StrategyName[] {
  const names = value.split(',').map((s) => s.trim());
  return names.map((name) => {
    const known = ALIASES[name];
    if (known) return known;
    throw new UsageError(
      `${flag}: unknown strategy '${name}'; valid values are 'remote', 'dynamic', 'sandboxed' (alias 'linux-sandbox') and 'local' (alias 'standalone')`,
    );
  });
}

/** Parses one `--strategy=Mnemonic=list` value. */
export function parseMnemonicStrategy(value: string): [mnemonic: string, strategies: StrategyName[]] {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new UsageError(`--strategy: expected Mnemonic=strategy[,strategy...], got '${value}'`);
  return [value.slice(0, eq), parseStrategyList(value.slice(eq + 1), `--strategy=${value.slice(0, eq)}`)];
}

/**
 * Folds the values of `--dynamic_local_strategy` (`branch` local) or `--dynamic_remote_strategy`
 * (remote), in order, as Bazel reads them: `[Mnemonic=]strategy[,strategy...]`; an entry without a
 * mnemonic sets the fallback list; a later entry replaces an earlier one for the same mnemonic.
 * @throws UsageError for an unknown strategy, or one that cannot run that branch (local strategies
 *   locally, remote remotely; dynamic in neither).
 */
export function parseDynamicStrategies(values: readonly string[], branch: 'local' | 'remote'): DynamicBranchFlags | undefined {
  if (values.length === 0) return undefined;
  const flag = `--dynamic_${branch}_strategy`;
  const allowed = DYNAMIC_BRANCH_STRATEGIES[branch];
  let fallback: StrategyName[] | undefined;
  const byMnemonic: Record<string, StrategyName[]> = {};
  for (const value of values) {
    const eq = value.indexOf('=');
    const mnemonic = eq < 0 ? undefined : value.slice(0, eq);
    if (mnemonic === '') throw new UsageError(`${flag}=${value}: expected [Mnemonic=]strategy[,strategy...]; the mnemonic is empty`);
    const list = value
      .slice(eq + 1)
      .split(',')
      .map((name) => {
        const known = ALIASES[name.trim()];
        if (known && allowed.names.includes(known)) return known;
        throw new UsageError(`${flag}=${value}: '${name.trim()}' is not a ${branch} strategy of dynamic execution; valid values are ${allowed.valid}`);
      });
    if (mnemonic === undefined) fallback = list;
    else byMnemonic[mnemonic] = list;
  }
  return { ...(fallback ? { fallback } : {}), ...(Object.keys(byMnemonic).length > 0 ? { byMnemonic } : {}) };
}

/** The strategies one branch of dynamic execution may run `mnemonic` with, in order of preference: its own entry wins over the fallback. */
export function dynamicBranchStrategies(flags: StrategyFlags, branch: 'local' | 'remote', mnemonic: string): readonly StrategyName[] {
  const branchFlags = branch === 'local' ? flags.dynamicLocal : flags.dynamicRemote;
  return branchFlags?.byMnemonic?.[mnemonic] ?? branchFlags?.fallback ?? [branch === 'local' ? 'sandboxed' : 'remote'];
}

type StrategyChoice =
  | { readonly kind: 'chosen'; readonly strategy: StrategyName; readonly fellBackFromSandbox: boolean }
  | { readonly kind: 'none'; readonly message: string };

/**
 * Picks the strategy of one action as Bazel does: the action's list is `--strategy=<mnemonic>`, else
 * `--genrule_strategy` for genrules, else `--spawn_strategy`, else `remote,sandboxed,local` with a
 * remote executor and `sandboxed,local` without. The first strategy in the list that can run the
 * action wins: remote cannot without `--remote_executor` or for an action tagged `local`,
 * `no-remote` or `no-remote-exec`; sandboxed cannot when the machine cannot sandbox or for an
 * action tagged `local`, `no-sandbox` or `requires-network` (the namespace sandbox has no
 * network). Local always can; when the list offers nothing usable, local is still used for an
 * action whose tags forbid the others, when the list was the default, or when `sandboxFallback`
 * allows it.
 */
export function chooseStrategy(action: Action, flags: StrategyFlags, canSandbox: boolean, canRemote = false): StrategyChoice {
  const requirements = new Set<string>(action.executionRequirements);
  const remoteForbidden = requirements.has('local') || requirements.has('no-remote') || requirements.has('no-remote-exec');
  const sandboxForbidden = !mayBeSandboxed(action);
  const explicit = flags.strategyByMnemonic?.[action.mnemonic] ?? (action.mnemonic === 'Genrule' ? flags.genruleStrategy : undefined) ?? flags.spawnStrategy;
  const list = explicit ?? (canRemote ? ['remote', 'sandboxed', 'local'] : ['sandboxed', 'local']);
  // The first listed strategy this machine lacks (tags ruling a strategy out are not a lack).
  let lacking: StrategyName | undefined;
  for (const strategy of list) {
    // dynamic races a sandboxed local run against a remote one: it needs what remote needs.
    if (strategy === 'remote' || strategy === 'dynamic') {
      if (remoteForbidden) continue;
      if (!canRemote) {
        lacking ??= 'remote';
        continue;
      }
    }
    if (strategy === 'sandboxed') {
      if (sandboxForbidden) continue;
      if (!canSandbox) {
        lacking ??= strategy;
        continue;
      }
    }
    return { kind: 'chosen', strategy, fellBackFromSandbox: false };
  }
  // Only the action's tags ruled the listed strategies out: the tags pin it to local, as asked.
  if (lacking === undefined) return { kind: 'chosen', strategy: 'local', fellBackFromSandbox: false };
  if (lacking === 'remote') {
    return {
      kind: 'none',
      message: `no usable spawn strategy for ${action.mnemonic} action of ${action.owner}: '${list.join(',')}' was requested and remote and dynamic execution need --remote_executor`,
    };
  }
  if (flags.sandboxFallback) return { kind: 'chosen', strategy: 'local', fellBackFromSandbox: true };
  return {
    kind: 'none',
    message:
      `no usable spawn strategy for ${action.mnemonic} action of ${action.owner}: '${list.join(',')}' was requested and this machine cannot sandbox; ` +
      `add 'local' to the list (--spawn_strategy=sandboxed,local) or pass --sandbox_fallback`,
  };
}

/** Whether the action's tags allow the sandbox (`local`, `no-sandbox` and `requires-network` do not). */
export function mayBeSandboxed(action: Action): boolean {
  const requirements = action.executionRequirements;
  return !requirements.includes('local') && !requirements.includes('no-sandbox') && !requirements.includes('requires-network');
}

/** Whether a strategy flag names the sandbox explicitly. */
export function sandboxRequested(flags: StrategyFlags): boolean {
  const lists = [flags.spawnStrategy, flags.genruleStrategy, ...Object.values(flags.strategyByMnemonic ?? {})];
  return lists.some((list) => list?.includes('sandboxed'));
}

/** Whether any action could be sent to the sandbox under these flags (no --spawn_strategy: it could; dynamic races a sandboxed run). */
export function mayUseSandbox(flags: StrategyFlags): boolean {
  const lists = [flags.spawnStrategy, flags.genruleStrategy, ...Object.values(flags.strategyByMnemonic ?? {})];
  return flags.spawnStrategy === undefined || sandboxRequested(flags) || lists.some((list) => list?.includes('dynamic'));
}
