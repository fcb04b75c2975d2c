import { StarList, StarObject, type Value } from '../../starlark/index.js';
import type { CtxValue } from '../starlark/ctx-value.js';
import type { RuleView } from './rule-view.js';

/** What `dir(ctx)` lists for an aspect: a rule's ctx without `outputs`, with `rule` and `aspect_ids`. */
const ASPECT_CTX_MEMBERS = [
  'actions',
  'aspect_ids',
  'attr',
  'bin_dir',
  'build_file_path',
  'configuration',
  'coverage_instrumented',
  'disabled_features',
  'exec_groups',
  'executable',
  'expand_location',
  'expand_make_variables',
  'features',
  'file',
  'files',
  'fragments',
  'genfiles_dir',
  'info_file',
  'label',
  'rule',
  'runfiles',
  'target_platform_has_constraint',
  'toolchains',
  'var',
  'version_file',
  'workspace_name',
];

/**
 * The `ctx` of an aspect implementation: the aspect's own attributes (`ctx.attr`, `ctx.file`...),
 * actions and configuration come from a rule ctx built over the aspect's attributes; `ctx.rule` is
 * the rule it is applied to; `ctx.aspect_ids` names the aspects applied, this one last.
 */
export class AspectCtxValue extends StarObject {
  private readonly ids: StarList;

  constructor(
    private readonly inner: CtxValue,
    private readonly rule: RuleView,
    aspectIds: readonly string[],
    private readonly description: string,
  ) {
    super();
    this.ids = new StarList([...aspectIds]);
    this.ids.frozen = true;
  }

  get type(): string {
    return 'ctx';
  }

  override attr(name: string): Value | undefined {
    switch (name) {
      case 'rule':
        return this.rule;
      case 'aspect_ids':
        return this.ids;
      case 'outputs':
      case 'build_setting_value':
        return undefined;
      default:
        return this.inner.attr(name);
    }
  }

  override attrNames(): string[] {
    return [...ASPECT_CTX_MEMBERS];
  }

  repr(): string {
    return `<aspect context for ${this.description}>`;
  }
}
