import { StarList, StarObject, type Value } from '../../starlark/index.js';
import type { CtxValue } from '../starlark/ctx-value.js';
import type { RuleView } from './rule-view.js';

/** What a rule's ctx has that an aspect's has not. */
const NOT_IN_ASPECT_CTX = new Set(['outputs', 'build_setting_value']);

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
      default:
        return NOT_IN_ASPECT_CTX.has(name) ? undefined : this.inner.attr(name);
    }
  }

  override attrNames(): string[] {
    return [...this.inner.attrNames().filter((n) => !NOT_IN_ASPECT_CTX.has(n)), 'aspect_ids', 'rule'].sort();
  }

  repr(): string {
    return `<aspect context for ${this.description}>`;
  }
}
