import { KilnError, UsageError, type Position } from '../../core/index.js';
import {
  BuildConfiguration,
  execConfigurationOf,
  targetConfigurationOf,
  type ConfigurationContext,
  type ConfigurationPair,
} from '../config/build-configuration.js';
import type { BuildSettingLookup } from '../config/config-matching.js';
import type { BuildOptions } from '../options/build-options.js';
import { transitionDirectoryNameFragment } from './output-directory-name.js';

/**
 * The configurations transitions make, one per distinct set of options (so equal options reached
 * along different paths are one configuration, one output directory, one configured target key).
 * Each is named as present-day Bazel names it: `<cpu>-<mode>-ST-<hash>` with the hash over what
 * differs from the top-level configuration; equal to it, it is the top-level configuration.
 */
export class TransitionedConfigurations {
  private readonly targets = new Map<string, BuildConfiguration>();
  private readonly execs = new Map<BuildConfiguration, BuildConfiguration>();

  constructor(
    private readonly pair: ConfigurationPair,
    private readonly context: ConfigurationContext,
    private readonly buildSettings?: BuildSettingLookup,
  ) {
    this.targets.set(pair.target.options.fingerprint(), pair.target);
    this.execs.set(pair.target, pair.exec);
  }

  /**
   * The configuration of options a transition made from `from`; `at` is where the transition was
   * defined. A transition applied in an exec configuration (a tool's dependency) stays exec, named
   * against the build's exec configuration.
   */
  transitioned(from: BuildConfiguration, options: BuildOptions, at: Position | undefined): BuildConfiguration {
    if (from.isExec) return this.execTransitioned(options);
    const key = options.fingerprint();
    let config = this.targets.get(key);
    if (!config) {
      const fragment = transitionDirectoryNameFragment(options, this.pair.target.options, this.buildSettings);
      try {
        config = targetConfigurationOf(options, this.context, fragment);
      } catch (e) {
        // A platform the transition named that is none: the transition's error, not the command line's.
        if (e instanceof UsageError) throw new KilnError(e.message, at);
        throw e;
      }
      this.targets.set(key, config);
    }
    return config;
  }

  private execTransitioned(options: BuildOptions): BuildConfiguration {
    const base = this.pair.exec;
    if (options.fingerprint() === base.options.fingerprint()) return base;
    const key = `exec\u0000${options.fingerprint()}`;
    let config = this.targets.get(key);
    if (!config) {
      const fragment = transitionDirectoryNameFragment(options, base.options, this.buildSettings);
      config = new BuildConfiguration('exec', options, base.platform, this.context.host, this.context.outputRoot, fragment);
      this.targets.set(key, config);
    }
    return config;
  }

  /** The exec configuration of a configuration: the build's own exec one unless a transition changed what it keeps. */
  execConfiguration(config: BuildConfiguration): BuildConfiguration {
    if (config.isExec) return config;
    let exec = this.execs.get(config);
    if (!exec) {
      const derived = execConfigurationOf(config, this.pair.exec.platform, this.context);
      const base = this.pair.exec;
      exec =
        derived.options.fingerprint() === base.options.fingerprint()
          ? base
          : new BuildConfiguration(
              'exec',
              derived.options,
              derived.platform,
              this.context.host,
              this.context.outputRoot,
              transitionDirectoryNameFragment(derived.options, base.options, this.buildSettings),
            );
      this.execs.set(config, exec);
    }
    return exec;
  }
}
