import { Label, MAIN_REPO, StarLabel } from '../loading/index.js';
import { repr, StarDict, StarList, StarTuple, type Value } from '../starlark/index.js';

/**
 * Renders labels as Bazel's documentation does: in display form, shorthand where asked (`//pkg`
 * for `//pkg:pkg`), and, with a main repository name (render_main_repo_name), main-repository
 * labels with an explicit `@name`.
 */
export class LabelRenderer {
  constructor(private readonly mainRepoName?: string) {}

  /** A label string (canonical or display form) rendered for documentation. */
  render(label: string, shorthand = true): string {
    const parsed = Label.parse(label);
    const lastSegment = parsed.pkg.slice(parsed.pkg.lastIndexOf('/') + 1);
    const main = parsed.repo === MAIN_REPO || parsed.repo === this.mainRepoName;
    const target = shorthand && parsed.name === lastSegment && parsed.pkg !== '' ? '' : `:${parsed.name}`;
    if (!main) {
      if (shorthand && parsed.pkg === '' && parsed.name === parsed.repo) return `@${parsed.repo}`;
      return `@${parsed.repo}//${parsed.pkg}${target}`;
    }
    const text = `//${parsed.pkg}${target}`;
    if (this.mainRepoName === undefined) return text;
    if (shorthand && text === `//:${this.mainRepoName}`) return `@${this.mainRepoName}`;
    return `@${this.mainRepoName}${text}`;
  }

  /** `repr()` of a value, with Label values as `Label("<display form>")` (function parameter defaults). */
  repr(v: Value): string {
    if (v instanceof StarLabel) return `Label(${repr(this.render(v.label.toString(), false))})`;
    if (v instanceof StarList) return `[${v.elems.map((e) => this.repr(e)).join(', ')}]`;
    if (v instanceof StarTuple) return v.elems.length === 1 ? `(${this.repr(v.elems[0]!)},)` : `(${v.elems.map((e) => this.repr(e)).join(', ')})`;
    if (v instanceof StarDict) return `{${[...v.iterate()].map((k) => `${this.repr(k)}: ${this.repr(v.get(k)!)}`).join(', ')}}`;
    return repr(v);
  }
}
