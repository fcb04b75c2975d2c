import fc from 'fast-check';

// Property tests explore new random inputs on every developer run; CI replays one fixed seed so a
// submission's result does not depend on luck. A developer's failure prints its seed to replay it.
if (process.env.CI) fc.configureGlobal({ seed: Number(process.env.KILN_FAST_CHECK_SEED ?? 20261122) });
