/** Documentation extraction: the ModuleInfo of an evaluated .bzl file, and its text format. */
export { extractModuleInfo, type ExtractionOptions } from './module-info-extractor.js';
export { ExtractionError } from './extraction-error.js';
export { LabelRenderer } from './label-renderer.js';
export { printTextFormat } from './text-format.js';
