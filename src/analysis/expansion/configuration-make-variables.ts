import type { BuildConfiguration } from '../config/build-configuration.js';

/**
 * The Make variables every rule sees in a configuration (Bazel's "predefined variables"):
 * COMPILATION_MODE, TARGET_CPU, BINDIR and GENDIR (exec paths of the output directories), then
 * every `--define NAME=VALUE`, which, as in Bazel, overrides a predefined variable of the same name.
 */
export function configurationMakeVariables(config: BuildConfiguration): Map<string, string> {
  const vars = new Map([
    ['COMPILATION_MODE', config.compilationMode],
    ['TARGET_CPU', config.cpu],
    ['BINDIR', config.outputDirectories.bin],
    ['GENDIR', config.outputDirectories.genfiles],
  ]);
  for (const [name, value] of config.options.defines()) vars.set(name, value);
  return vars;
}
