import { KilnError } from '../../core/index.js';
import {
  BUILD_SETTING_RULE_CLASSES,
  Label,
  packageId,
  readRegistrations,
  type Registrations,
  type BzlModule,
  type Package,
  type PackageLoader,
  type Provider,
  type StarlarkRuleFunction,
  type Target,
} from '../../loading/index.js';
import { parseTargetPattern } from '../../query/index.js';
import type { BuildSettingDefinition, BuildSettingType } from '../options/user-defined-flag.js';
import type { AnalysisTarget, TargetGraph } from './configured-target.js';

/** Told of what analysis reads from the loaded world: the packages, and the .bzl modules (by label). */
export interface TargetGraphReads {
  package(repo: string, pkg: string): void;
  bzl(label: string): void;
}

/**
 * The loaded world as analysis reads it: packages are loaded on first use through loading's
 * PackageLoader and their targets mapped to {@link AnalysisTarget} (canonical labels added).
 * A target of a package with errors is an error, as in Bazel.
 */
export class LoadedTargetGraph implements TargetGraph {
  private readonly packages = new Map<string, Package>();
  private readonly targets = new Map<string, { readonly target: AnalysisTarget | undefined; readonly repo: string; readonly pkg: string }>();
  /** Told of every read, cached or not (incremental analysis records what each configured target read). */
  readObserver: TargetGraphReads | undefined;

  private registered: Registrations | undefined;

  constructor(private readonly loader: PackageLoader) {}

  registrations(): Registrations {
    this.registered ??= readRegistrations(this.loader.workspace.root);
    return this.registered;
  }

  rulesMatching(pattern: string): { readonly labels: readonly string[]; readonly explicit: boolean } {
    const parsed = parseTargetPattern(pattern);
    if (parsed.kind === 'single') return { labels: [parsed.label.toString()], explicit: true };
    const { repo } = parsed;
    const packages = parsed.kind === 'beneath' ? this.loader.repository(repo).packagesUnder(parsed.dir) : [parsed.pkg];
    const labels: string[] = [];
    for (const pkg of packages) {
      for (const t of this.load(repo, pkg).targets.values()) {
        if (t.kind === 'rule') labels.push(`${repo === '' ? '' : `@${repo}`}//${pkg}:${t.name}`);
      }
    }
    return { labels, explicit: false };
  }

  target(label: string): AnalysisTarget | undefined {
    const known = this.targets.get(label);
    if (known !== undefined) {
      this.readObserver?.package(known.repo, known.pkg);
      return known.target;
    }
    const { repo, pkg: pkgName, name } = Label.parse(label);
    const pkg = this.load(repo, pkgName);
    const loaded = pkg.targets.get(name);
    if (loaded && pkg.errors.length > 0) {
      const first = pkg.errors[0]!;
      throw new KilnError(`Target '${label}' contains an error and its package is in error: ${first.message}`, first.pos);
    }
    const mapped = loaded === undefined ? undefined : toAnalysisTarget(loaded, repo, pkg.pkg);
    this.targets.set(label, { target: mapped, repo, pkg: pkgName });
    return mapped;
  }

  defaultVisibility(label: string): readonly string[] | undefined {
    return this.packageOf(label).defaults.visibility ?? undefined;
  }

  defaultTestonly(label: string): boolean {
    return this.packageOf(label).defaults.testonly;
  }

  starlarkRule(key: string): StarlarkRuleFunction | undefined {
    this.readObserver?.bzl(key.slice(0, key.lastIndexOf('%')));
    return this.loader.starlarkRule(key);
  }

  bzlModule(label: string): BzlModule {
    this.readObserver?.bzl(label);
    return this.loader.bzlModule(label);
  }

  bzlModuleAt(displayPath: string): BzlModule | undefined {
    const module = this.loader.bzlModuleAt(displayPath);
    if (module) this.readObserver?.bzl(module.label);
    return module;
  }

  starlarkProvider(key: string): Provider | undefined {
    this.readObserver?.bzl(key.slice(0, key.lastIndexOf('%')));
    try {
      return this.loader.starlarkProvider(key);
    } catch {
      return undefined; // a workspace whose bazel_skylib cannot be loaded
    }
  }

  /**
   * Build settings for flag_values matching and command-line values: skylib-style rules
   * (`string_flag` & co.), any Starlark rule with `build_setting = config.<type>(flag = ...)`,
   * and label_flag / label_setting.
   */
  buildSetting(label: string): BuildSettingDefinition | undefined {
    const t = this.target(label);
    if (t?.kind !== 'rule') return undefined;
    const defaultValue = t.attrs.get('build_setting_default') as BuildSettingDefinition['defaultValue'];
    if (t.ruleClass === 'label_flag' || t.ruleClass === 'label_setting') {
      return { label, type: 'label', defaultValue, isFlag: t.ruleClass === 'label_flag' };
    }
    if (t.ruleDefinition !== undefined) {
      const setting = this.loader.starlarkRule(t.ruleDefinition)?.ruleClass?.starlark?.buildSetting;
      if (!setting) return undefined;
      // skylib's string_flag checks its `values` in its implementation, as Bazel leaves it to the rule.
      return { label, type: setting.type, defaultValue, isFlag: setting.flag };
    }
    if (!BUILD_SETTING_RULE_CLASSES.has(t.ruleClass)) return undefined;
    const type = t.ruleClass.replace(/_(flag|setting)$/, '') as BuildSettingType;
    const allowed = t.attrs.get('values');
    return {
      label,
      type,
      defaultValue,
      isFlag: t.ruleClass.endsWith('_flag'),
      ...(Array.isArray(allowed) && allowed.length > 0 ? { allowedValues: allowed as string[] } : {}),
    };
  }

  /** For checking `--//pkg:flag`: the setting, null for a target that is none, or why there is no target. */
  buildSettingForFlag(label: string): BuildSettingDefinition | null | { readonly missing: string } {
    const { pkg, name } = Label.parse(label);
    const p = this.packageOf(label);
    if (!p.targets.has(name)) return { missing: `no such target '${label}': target '${name}' not declared in package '${pkg}' defined by ${p.buildFile}` };
    return this.buildSetting(label) ?? null;
  }

  private packageOf(label: string): Package {
    const { repo, pkg } = Label.parse(label);
    return this.load(repo, pkg);
  }

  private load(repo: string, pkg: string): Package {
    this.readObserver?.package(repo, pkg);
    const key = packageId(repo, pkg);
    let p = this.packages.get(key);
    if (!p) {
      p = this.loader.loadPackage(repo, pkg);
      this.packages.set(key, p);
    }
    return p;
  }
}

function toAnalysisTarget(t: Target, repo: string, pkg: string): AnalysisTarget {
  const label = (name: string) => `${repo === '' ? '' : `@${repo}`}//${pkg}:${name}`;
  switch (t.kind) {
    case 'rule':
      return {
        kind: 'rule',
        label: label(t.name),
        ruleClass: t.ruleClass,
        location: t.location,
        attrs: t.attrs,
        outputs: t.outputs,
        ...(t.ruleDefinition ? { ruleDefinition: t.ruleDefinition } : {}),
      };
    case 'source':
      return { kind: 'source', label: label(t.name), location: t.location, ...(t.visibility ? { visibility: t.visibility } : {}) };
    case 'generated':
      return { kind: 'generated', label: label(t.name), location: t.location, generatingRule: label(t.generatingRule) };
    case 'package_group':
      return { kind: 'package_group', label: label(t.name), location: t.location, packages: t.packages, includes: t.includes };
  }
}
