import { UsageError } from '../core/index.js';
import type { Action } from '../actions/index.js';

export type StrategyName = 'local' | 'sandboxed';

/** The strategy flags as Bazel spells them. Lists are in order of preference. */
export interface StrategyFlags {
  /** `--spawn_strategy=sandboxed,local`. Unset: sandboxed when the machine can, else local. */
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
}

const ALIASES: Readonly<Record<string, StrategyName>> = {
  local: 'local',
  standalone: 'local',
  sandboxed: 'sandboxed',
  'linux-sandbox': 'sandboxed',
};

/**
 * Parses a strategy flag value (`sandboxed,local`). `flag` names the flag in errors.
 * @throws UsageError for `remote` (not available yet), an unknown or an empty name.
 */
export function parseStrategyList(value: string, flag: string): StrategyName[] {
  const names = value.split(',').map((s) => s.trim());
  return names.map((name) => {
    const known = ALIASES[name];
    if (known) return known;
    if (name === 'remote') {
      throw new UsageError(`${flag}: the 'remote' strategy is not available yet (remote execution comes with --remote_executor); use 'sandboxed' or 'local'`);
    }
    throw new UsageError(`${flag}: unknown strategy '${name}'; valid values are 'sandboxed' (alias 'linux-sandbox') and 'local' (alias 'standalone')`);
  });
}

/** Parses one `--strategy=Mnemonic=list` value. */
export function parseMnemonicStrategy(value: string): [mnemonic: string, strategies: StrategyName[]] {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new UsageError(`--strategy: expected Mnemonic=strategy[,strategy...], got '${value}'`);
  return [value.slice(0, eq), parseStrategyList(value.slice(eq + 1), `--strategy=${value.slice(0, eq)}`)];
}

export type StrategyChoice =
  | { readonly kind: 'chosen'; readonly strategy: StrategyName; readonly fellBackFromSandbox: boolean }
  | { readonly kind: 'none'; readonly message: string };

/**
 * Picks the strategy of one action as Bazel does: the action's list is `--strategy=<mnemonic>`, else
 * `--genrule_strategy` for genrules, else `--spawn_strategy`, else `sandboxed,local`. Tags `local`,
 * `no-sandbox` and `requires-network` (and `local = True`) force local. The first strategy in the
 * list that can run the action wins; sandboxed cannot when the machine cannot sandbox, and then
 * local is used only if it is in the list, the list was the default, or `sandboxFallback` allows it.
 */
export function chooseStrategy(action: Action, flags: StrategyFlags, canSandbox: boolean): StrategyChoice {
  const requirements = action.executionRequirements;
  // requires-network: the namespace sandbox has no network at all, so such actions run locally.
  if (requirements.includes('local') || requirements.includes('no-sandbox') || requirements.includes('requires-network')) return { kind: 'chosen', strategy: 'local', fellBackFromSandbox: false };
  const explicit =
    flags.strategyByMnemonic?.[action.mnemonic] ?? (action.mnemonic === 'Genrule' ? flags.genruleStrategy : undefined) ?? flags.spawnStrategy;
  const list = explicit ?? ['sandboxed', 'local'];
  for (const strategy of list) {
    if (strategy === 'sandboxed' && !canSandbox) continue;
    return { kind: 'chosen', strategy, fellBackFromSandbox: false };
  }
  if (flags.sandboxFallback) return { kind: 'chosen', strategy: 'local', fellBackFromSandbox: true };
  return {
    kind: 'none',
    message:
      `no usable spawn strategy for ${action.mnemonic} action of ${action.owner}: '${list.join(',')}' was requested and this machine cannot sandbox; ` +
      `add 'local' to the list (--spawn_strategy=sandboxed,local) or pass --sandbox_fallback`,
  };
}

/** Whether a strategy flag names the sandbox explicitly. */
export function sandboxRequested(flags: StrategyFlags): boolean {
  const lists = [flags.spawnStrategy, flags.genruleStrategy, ...Object.values(flags.strategyByMnemonic ?? {})];
  return lists.some((list) => list?.includes('sandboxed'));
}

/** Whether any action could be sent to the sandbox under these flags (no --spawn_strategy: it could). */
export function mayUseSandbox(flags: StrategyFlags): boolean {
  return flags.spawnStrategy === undefined || sandboxRequested(flags);
}
