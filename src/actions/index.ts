// Action, Artifact and the action keys: what analysis registers and exec, remote and the CLI run (README.md).
export {
  type Action,
  type Artifact,
  type SourceArtifact,
  type DerivedArtifact,
  type ExecutionRequirement,
  type InProcessWork,
  type TreeFileLister,
  EXECUTION_REQUIREMENTS,
  executionRequirementsFromTags,
  execPropertiesOf,
  LIVE_OUTPUT_ENV,
} from './action.js';
export { inProcessAction, type InProcessActionParts } from './in-process-action.js';
export { computeActionKey, type ActionKey, type ActionKeyParams } from './action-key.js';
export { localActionKey } from './local-action-key.js';
export {
  buildInputTree,
  compareUtf8,
  inputFilesOf,
  type InputDirectory,
  type InputEntry,
  type InputFile,
  type InputSymlink,
  type InputTree,
} from './input-tree.js';
export {
  encodeTree,
  producedFiles,
  symlinkEscape,
  type EncodedTree,
  type OutputKind,
  type ProducedFile,
  type ProducedOutput,
  type ProducedSymlink,
  type ProducedTree,
  type TreeContents,
  type TreeFile,
  type TreeSymlink,
} from './produced-output.js';
export {
  decodeTree,
  InvalidTreeError,
  MAX_TREE_BYTES,
  MAX_TREE_DEPTH,
  MAX_TREE_DIRECTORIES,
  MAX_TREE_ENTRIES,
  MAX_TREE_FILES,
  MAX_TREE_MESSAGE_BYTES,
} from './tree-decoding.js';
