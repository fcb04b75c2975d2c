export {
  type Action,
  type Artifact,
  type SourceArtifact,
  type DerivedArtifact,
  type ExecutionRequirement,
  EXECUTION_REQUIREMENTS,
  executionRequirementsFromTags,
} from './action.js';
