/** Time in milliseconds since the epoch, injected so tests drive the scheduler with a fake clock. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
