import { KilnError } from '../core/index.js';
import { Label } from './label.js';
import type { Package } from './package.js';
import type { PackageLoader } from './package-loader.js';
import { NATIVE_RULE_CLASSES } from './rules/native-rules.js';
import type { RuleTarget, Target } from './target.js';
import type { TestSuiteGraph } from './test-suite-expansion.js';

/** A target with its label and package, as test_suite expansion over loaded packages sees it. */
export interface LoadedTarget {
  readonly label: Label;
  readonly target: Target;
  readonly pkg: Package;
}

/**
 * Whether a rule class is a test rule: native ones say so; Starlark ones are tests exactly when
 * their name ends in `_test` (Bazel requires that of `rule(test = True)` and forbids it otherwise).
 */
export function isTestRuleClass(ruleClass: string): boolean {
  return NATIVE_RULE_CLASSES.get(ruleClass)?.isTest ?? ruleClass.endsWith('_test');
}

/** The string-list value of a rule's attribute, or [] (select()s are not allowed on tags). */
export function ruleStringList(rule: RuleTarget, name: string): readonly string[] {
  const v = rule.attrs.get(name);
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** {@link TestSuiteGraph} over a PackageLoader's packages. A label naming nothing is a KilnError. */
export class PackageTestSuiteGraph implements TestSuiteGraph<LoadedTarget> {
  constructor(private readonly loader: PackageLoader) {}

  labelOf(t: LoadedTarget): string {
    return t.label.toString();
  }

  isTestRule(t: LoadedTarget): boolean {
    return t.target.kind === 'rule' && isTestRuleClass(t.target.ruleClass);
  }

  isTestSuite(t: LoadedTarget): boolean {
    return t.target.kind === 'rule' && t.target.ruleClass === 'test_suite';
  }

  tagsOf(t: LoadedTarget): readonly string[] {
    return t.target.kind === 'rule' ? ruleStringList(t.target, 'tags') : [];
  }

  sizeOf(t: LoadedTarget): string {
    const size = t.target.kind === 'rule' ? t.target.attrs.get('size') : undefined;
    return typeof size === 'string' ? size : 'medium';
  }

  listedTests(suite: LoadedTarget): readonly LoadedTarget[] {
    if (suite.target.kind !== 'rule') return [];
    return ruleStringList(suite.target, 'tests').map((l) => this.target(Label.parse(l), suite));
  }

  packageRules(suite: LoadedTarget): readonly LoadedTarget[] {
    const out: LoadedTarget[] = [];
    for (const t of suite.pkg.targets.values()) if (t.kind === 'rule') out.push({ label: suite.label.sibling(t.name), target: t, pkg: suite.pkg });
    return out;
  }

  /** The loaded target of a label; `from` names the suite in the error. */
  target(label: Label, from?: LoadedTarget): LoadedTarget {
    const pkg = this.loader.loadPackage(label.repo, label.pkg);
    const target = pkg.targets.get(label.name);
    if (!target) {
      const where = from ? ` (listed in the tests of ${from.label.toString()})` : '';
      throw new KilnError(`no such target '${label.toString()}': target '${label.name}' not declared in package '${label.pkg}'${where}`, from?.target.location);
    }
    return { label, target, pkg };
  }
}
