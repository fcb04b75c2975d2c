import { None, StarObject, StarlarkError, Builtin, type Value } from '../../starlark/index.js';
import type { BuildConfiguration } from '../config/build-configuration.js';

/**
 * The configuration fragments present-day Bazel gives `ctx.fragments` (its fragment registry's
 * Starlark names). Kiln implements `cpp.compilation_mode()` and `cpp.minimum_os_version()`; reading
 * another member of a fragment fails, saying so.
 */
const FRAGMENTS = ['android', 'apple', 'bazel_android', 'bazel_py', 'coverage', 'cpp', 'j2objc', 'java', 'objc', 'platform', 'proto', 'py'];

/** `ctx.fragments`: a rule reads only the fragments it declares in `rule(fragments = [...])`, as in Bazel. */
export class FragmentsValue extends StarObject {
  constructor(
    private readonly ruleClass: string,
    /** `rule(fragments = ...)`; undefined: any (an aspect's ctx). */
    private readonly declared: readonly string[] | undefined,
    private readonly config: BuildConfiguration,
  ) {
    super();
  }
  get type(): string {
    return 'fragments';
  }
  override attr(name: string): Value | undefined {
    if (!FRAGMENTS.includes(name)) return undefined;
    if (this.declared && !this.declared.includes(name)) {
      // Bazel's FragmentCollection wording.
      throw new StarlarkError(
        `${this.ruleClass} has to declare '${name}' as a required fragment in target configuration in order to access it. Please update the 'fragments' argument of the rule definition (for example: fragments = ["${name}"])`,
      );
    }
    return new FragmentValue(name, this.config);
  }
  override attrNames(): string[] {
    return [...FRAGMENTS];
  }
  repr(): string {
    return '<fragments>';
  }
}

class FragmentValue extends StarObject {
  constructor(
    private readonly name: string,
    private readonly config: BuildConfiguration,
  ) {
    super();
  }
  get type(): string {
    return 'fragment';
  }
  override attr(member: string): Value | undefined {
    if (this.name === 'cpp' && member === 'minimum_os_version') {
      // CppConfiguration.minimumOsVersion(): --minimum_os_version, None when unset.
      return new Builtin('minimum_os_version', () => {
        const value = this.config.options.getString('minimum_os_version');
        return value === '' ? None : value;
      });
    }
    if (this.name === 'cpp' && member === 'compilation_mode') return new Builtin('compilation_mode', () => this.config.compilationMode);
    throw new StarlarkError(`ctx.fragments.${this.name}.${member} is not supported by Kiln`);
  }
  repr(): string {
    return `<${this.name} fragment>`;
  }
}
