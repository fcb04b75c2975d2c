import { StarlarkError, type Kwargs, type Value } from '../starlark/index.js';
import { Provider, type ProviderInstance } from './provider.js';

/** What a predeclared name Kiln does not honour stands for: it decides the value's type and its fields. */
export type UnsupportedKind = 'function' | 'module' | 'provider';

/**
 * A predeclared name of present-day Bazel that Kiln does not honour yet (`cc_common`, `CcInfo`,
 * `configuration_field`, ...). It resolves and loads like the real one, so a .bzl file that merely
 * mentions it loads; calling it fails with "X is not supported by Kiln" at the call. A module's
 * fields are placeholders of their own (`cc_common.CcToolchainInfo`), so reading one at a file's
 * top level still loads and `hasattr` says yes. It is a Provider, keyed by its name, so it may stand
 * wherever a provider is expected (`providers = [CcInfo]`, `dep[CcInfo]`, `CcInfo in dep`): no
 * target Kiln analyses ever carries one.
 */
export class UnsupportedValue extends Provider {
  private readonly fieldValues = new Map<string, UnsupportedValue>();

  constructor(
    readonly qualifiedName: string,
    readonly kind: UnsupportedKind,
  ) {
    super('', undefined, undefined, qualifiedName);
  }

  override get type(): string {
    return this.kind === 'module' ? 'module' : this.kind === 'provider' ? 'Provider' : 'builtin_function_or_method';
  }

  /** The error every use raises, positioned at the call by the evaluator. */
  notSupported(): StarlarkError {
    return new StarlarkError(`${this.qualifiedName} is not supported by Kiln`);
  }

  override call(): Value {
    throw this.notSupported();
  }

  override instantiate(_args: Value[], _kwargs: Kwargs | null): ProviderInstance {
    throw this.notSupported();
  }

  override attr(name: string): Value | undefined {
    if (this.kind !== 'module') return undefined;
    let v = this.fieldValues.get(name);
    if (!v) {
      v = unsupported(`${this.qualifiedName}.${name}`);
      this.fieldValues.set(name, v);
    }
    return v;
  }

  override missingAttrMessage(): string {
    return this.notSupported().message;
  }

  override repr(): string {
    return `<${this.kind} ${this.qualifiedName}, not supported by Kiln>`;
  }
}

/** A placeholder for `name`; its kind is `kind`, else guessed from Bazel's naming (`FooInfo` is a provider). */
export function unsupported(name: string, kind?: UnsupportedKind): UnsupportedValue {
  const last = name.slice(name.lastIndexOf('.') + 1);
  return new UnsupportedValue(name, kind ?? (/^[A-Z]/.test(last) ? 'provider' : 'function'));
}

/** Entries for a predeclared environment: each name bound to its placeholder. */
export function unsupportedEntries(names: readonly string[], kind?: UnsupportedKind): [string, Value][] {
  return names.map((n) => [n, unsupported(n, kind)]);
}
