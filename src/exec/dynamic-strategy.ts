import { SpawnLost, type Spawn, type SpawnOutcome, type SpawnStrategy } from './spawn-strategy.js';

/**
 * Bazel's dynamic strategy: runs an action locally (sandboxed) and remotely at once and takes the
 * first to finish. Each branch claims the win before it writes into the execroot (the sandbox keeps
 * its outputs in its own directories until then, the remote branch downloads only then), so outputs
 * are written once, by the winner; the loser is cancelled and its failure ignored. A branch that
 * fails for want of its system (the remote endpoint unreachable) leaves the race to the other.
 * Counted as the winner's runner.
 */
export class DynamicStrategy implements SpawnStrategy {
  readonly name = 'dynamic';
  readonly runnerName = 'remote';

  constructor(
    private readonly local: SpawnStrategy,
    private readonly remote: SpawnStrategy,
  ) {}

  async exec(spawn: Spawn): Promise<SpawnOutcome> {
    let winner: SpawnStrategy | undefined;
    const branches = [this.local, this.remote].map((strategy) => {
      const cancel = new AbortController();
      const onAbort = () => cancel.abort();
      spawn.signal?.addEventListener('abort', onAbort, { once: true });
      const lost = () => winner !== undefined && winner !== strategy;
      const branch: Spawn = {
        ...spawn,
        signal: cancel.signal,
        claim: () => {
          if (winner && winner !== strategy) return false;
          winner = strategy;
          return true;
        },
        ...(spawn.withSlot ? { withSlot: (start, how) => spawn.withSlot!(start, { ...how, abandoned: lost }) } : {}),
      };
      const run = strategy.exec(branch).finally(() => spawn.signal?.removeEventListener('abort', onAbort));
      return { strategy, cancel, run };
    });
    // The first branch to settle with a result decides; a thrown branch leaves the race to the other.
    const outcome = await new Promise<{ strategy: SpawnStrategy; result?: SpawnOutcome; error?: unknown }>((resolve) => {
      let failed = 0;
      let firstError: unknown;
      for (const b of branches) {
        b.run.then(
          (result) => {
            winner ??= b.strategy; // a branch that finished without claiming (it had nothing to write)
            if (winner === b.strategy) resolve({ strategy: b.strategy, result });
          },
          (error: unknown) => {
            if (error instanceof SpawnLost) return;
            firstError ??= error;
            if (++failed === branches.length || winner === b.strategy) resolve({ strategy: b.strategy, error: firstError });
          },
        );
      }
    });
    for (const b of branches) if (b.strategy !== outcome.strategy) b.cancel.abort();
    // The loser stops quickly once cancelled; its directories must be free before the caller reuses them.
    await Promise.allSettled(branches.map((b) => b.run));
    if (outcome.error !== undefined) throw outcome.error;
    return { ...outcome.result!, ranAs: outcome.result!.ranAs ?? outcome.strategy.runnerName };
  }
}
