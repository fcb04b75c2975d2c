import { createHash } from 'node:crypto';
import { UsageError } from '../../core/index.js';
import type { BuildOptions } from '../options/build-options.js';
import { canonicalFlagLabel } from '../options/parse-build-options.js';
import {
  flattenPlatform,
  HOST_PLATFORM_LABEL,
  hostCpuName,
  hostPlatformDeclaration,
  type HostEnvironment,
  type Platform,
  type PlatformDeclaration,
} from './platform.js';

export type ConfigurationKind = 'target' | 'exec';

/** Where a configuration's files go, relative to the execution root. */
export interface OutputDirectories {
  readonly root: string;
  readonly bin: string;
  /** The same as bin while --incompatible_merge_genfiles_directory is on (the default). */
  readonly genfiles: string;
  readonly testlogs: string;
}

/**
 * One build configuration: options with the host-dependent defaults filled in, the platform the
 * outputs are for, an output directory of its own and a stable id. select() resolves against it.
 */
export class BuildConfiguration {
  readonly cpu: string;
  readonly hostCpu: string;
  readonly compilationMode: string;
  /** `<cpu>-<compilation_mode>`, plus `-exec` for the exec configuration. */
  readonly mnemonic: string;
  /** SHA-256 of the kind and the options' fingerprint; equal options give equal ids. */
  readonly id: string;
  readonly outputDirectories: OutputDirectories;

  constructor(
    readonly kind: ConfigurationKind,
    readonly options: BuildOptions,
    readonly platform: Platform,
    host: HostEnvironment,
    outputRoot = 'bazel-out',
    /** `ST-<hash>` for a configuration a transition made that differs from the top-level one (see transitions/). */
    readonly nameFragment = '',
  ) {
    this.hostCpu = options.getString('host_cpu') || hostCpuName(host);
    this.cpu = options.getString('cpu') || hostCpuName(host);
    this.compilationMode = options.getString('compilation_mode');
    this.mnemonic = `${this.cpu}-${this.compilationMode}${kind === 'exec' ? '-exec' : ''}${nameFragment ? `-${nameFragment}` : ''}`;
    // The mnemonic too: equal options reached by a transition in one build and from the command line in
    // another have different output paths, so they must not share stored configured targets.
    this.id = createHash('sha256').update(`${kind}\n${this.cpu}\n${this.hostCpu}\n${platform.label}\n${this.mnemonic}\n${options.fingerprint()}`).digest('hex');
    const root = `${outputRoot}/${this.mnemonic}`;
    const bin = `${root}/bin`;
    this.outputDirectories = {
      root,
      bin,
      genfiles: options.getBool('incompatible_merge_genfiles_directory') ? bin : `${root}/genfiles`,
      testlogs: `${root}/testlogs`,
    };
  }

  get isExec(): boolean {
    return this.kind === 'exec';
  }

  /** A short id for messages (`k8-fastbuild [3f2a1b0c]`). */
  toString(): string {
    return `${this.mnemonic} [${this.id.slice(0, 8)}]`;
  }
}

/** The pair a build uses: outputs for the target, tools for the machine the build runs on. */
export interface ConfigurationPair {
  readonly target: BuildConfiguration;
  readonly exec: BuildConfiguration;
  /** What made them: transitions make further configurations with it. */
  readonly context?: ConfigurationContext;
}

export interface ConfigurationContext {
  readonly host: HostEnvironment;
  /** Finds a `platform` declaration by canonical label (loading supplies it). */
  readonly platforms?: (label: string) => PlatformDeclaration | undefined;
  readonly outputRoot?: string;
}

/**
 * The target configuration from the command-line options, and the exec configuration derived
 * from it the way Bazel's exec transition does:
 *  - cpu becomes host_cpu, compilation_mode becomes host_compilation_mode (opt by default);
 *  - copt/cxxopt/conlyopt/linkopt become their host_ counterparts;
 *  - the target platform becomes the host platform;
 *  - stamping and --features are dropped (tools are built unstamped, without the target's features).
 * --define and user-defined flags are kept, as Bazel 2.1's host configuration keeps them.
 */
export function createConfigurations(options: BuildOptions, context: ConfigurationContext): ConfigurationPair {
  const target = targetConfigurationOf(options, context);
  const execPlatform = platformResolver(context)(options.getString('host_platform') || HOST_PLATFORM_LABEL, '--host_platform');
  return { target, exec: execConfigurationOf(target, execPlatform, context), context };
}

/** The target configuration of `options`: its platform is the first of --platforms, else the host platform. */
export function targetConfigurationOf(options: BuildOptions, context: ConfigurationContext, nameFragment = ''): BuildConfiguration {
  const resolve = platformResolver(context);
  const hostPlatformLabel = options.getString('host_platform') || HOST_PLATFORM_LABEL;
  const targetPlatforms = options.getList('platforms');
  // Like Bazel, only the first of several --platforms is the target platform.
  const targetPlatform = resolve(targetPlatforms[0] ?? hostPlatformLabel, '--platforms');
  return new BuildConfiguration('target', options, targetPlatform, context.host, context.outputRoot, nameFragment);
}

/** The exec configuration of any configuration (the same for a target and an exec one). */
export function execConfigurationOf(config: BuildConfiguration, execPlatform: Platform, context: ConfigurationContext): BuildConfiguration {
  if (config.isExec) return config;
  const o = config.options;
  const execOptions = o.with({
    cpu: config.hostCpu,
    compilation_mode: o.getString('host_compilation_mode'),
    copt: o.getList('host_copt'),
    cxxopt: o.getList('host_cxxopt'),
    conlyopt: o.getList('host_conlyopt'),
    linkopt: o.getList('host_linkopt'),
    platforms: [execPlatform.label],
    stamp: false,
    features: [],
  });
  return new BuildConfiguration('exec', execOptions, execPlatform, context.host, context.outputRoot);
}

function platformResolver(context: ConfigurationContext): (label: string, flag: string) => Platform {
  const hostDecl = hostPlatformDeclaration(context.host);
  const lookup = (label: string): PlatformDeclaration | undefined => (label === HOST_PLATFORM_LABEL ? hostDecl : context.platforms?.(label));
  return (written, flag) => {
    const label = canonicalFlagLabel(written) ?? written;
    if (lookup(label) === undefined) throw new UsageError(`${flag}: '${label}' is not a platform`);
    return flattenPlatform(label, lookup);
  };
}
