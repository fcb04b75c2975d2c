import type { BuildConfiguration } from '../config/build-configuration.js';

/**
 * The Make variables every rule sees in a configuration (Bazel's "predefined variables"):
 * COMPILATION_MODE, TARGET_CPU, BINDIR and GENDIR (exec paths of the output directories).
 */
export function configurationMakeVariables(config: BuildConfiguration): Map<string, string> {
  return new Map([
    ['COMPILATION_MODE', config.compilationMode],
    ['TARGET_CPU', config.cpu],
    ['BINDIR', config.outputDirectories.bin],
    ['GENDIR', config.outputDirectories.genfiles],
  ]);
}
