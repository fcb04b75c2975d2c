import { Builtin, None, StarStruct, unpackArgs, type Value } from '../../starlark/index.js';
import type { BuildConfiguration } from '../config/build-configuration.js';

const fragmentsByConfig = new WeakMap<BuildConfiguration, StarStruct>();

/**
 * `ctx.fragments`: the configuration fragments rules read options through. Kiln has no C++ rules;
 * its `cpp` fragment offers the option readers of Bazel's CppConfiguration that Starlark rule sets
 * (and skylib's own analysis tests) call: `compilation_mode()` and `minimum_os_version()`.
 */
export function configurationFragments(config: BuildConfiguration): StarStruct {
  let fragments = fragmentsByConfig.get(config);
  if (!fragments) {
    const reader = (name: string, value: () => Value): [string, Value] => [
      name,
      new Builtin(name, (_t, args, kwargs) => (unpackArgs(name, args, kwargs, []), value())),
    ];
    const minimum = config.options.getString('minimum_os_version');
    const cpp = new StarStruct([
      reader('compilation_mode', () => config.compilationMode),
      reader('minimum_os_version', () => (minimum === '' ? None : minimum)),
    ]);
    fragments = new StarStruct([['cpp', cpp]]);
    fragmentsByConfig.set(config, fragments);
  }
  return fragments;
}
