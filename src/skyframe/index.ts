/** Skyframe: a small incremental evaluator (typed keys, memoised values, dependencies, cycles, persistence with change pruning). */
export {
  Evaluator,
  CycleError,
  skyFunction,
  type Environment,
  type SkyFunction,
  type SkyFunctionEntry,
  type PersistedEntry,
  type PersistentStore,
  type InputOracle,
  type EvaluationStats,
} from './evaluator.js';
export { SkyFamily, SkyKey } from './keys.js';
export { FileStore } from './file-store.js';
