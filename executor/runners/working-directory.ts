import { isAbsolute, join, normalize, sep } from 'node:path';
import { InvalidArgumentError } from '../../src/core/index.js';

/** The absolute working directory of a request, refusing one that leaves the input root. */
export function resolveWorkingDirectory(buildDirectory: string, workingDirectory: string): string {
  const relative = normalize(workingDirectory || '.');
  if (isAbsolute(relative) || relative === '..' || relative.startsWith(`..${sep}`)) {
    throw new InvalidArgumentError(`Command.working_directory '${workingDirectory}' is outside the input root`);
  }
  return join(buildDirectory, relative);
}
