// How every command opens its workspace and output base: its own entry, so that a command that
// builds nothing (query, clean) does not load execution.
export { openWorkspace, type WorkspaceContext, type WorkspaceRequest } from './workspace.js';
export {
  outputLayout,
  lockOutputBase,
  removeConvenienceSymlinks,
  updateConvenienceSymlinks,
  type ConvenienceSymlinkOptions,
  DEFAULT_SYMLINK_PREFIX,
  type OutputLayout,
} from './output-base.js';
export { whyDirectoryIsUnusable } from './usable-directory.js';
