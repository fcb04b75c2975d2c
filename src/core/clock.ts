/** Wall-clock time in milliseconds since the Unix epoch, passed in so that tests control it. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
