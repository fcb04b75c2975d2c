/** Skyframe: a small incremental evaluator (keys, memoised values, dependencies, cycles, persistence). */
export {
  Evaluator,
  CycleError,
  type Environment,
  type SkyFunction,
  type PersistedEntry,
  type PersistentStore,
  type InputOracle,
  type EvaluationStats,
} from './evaluator.js';
export { FileStore } from './file-store.js';
