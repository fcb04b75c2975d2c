import { Builtin, StarObject, StarlarkError, unpackArgs, type ReprPath, type Value } from '../starlark/index.js';
import { Label, type PackageContext } from './label.js';

/** Bazel's `Label` value in Starlark: `Label("//pkg:name")`, with name, package, repo_name... */
export class StarLabel extends StarObject {
  constructor(readonly label: Label) {
    super();
  }
  get type(): string {
    return 'Label';
  }
  override hash(): number {
    let h = 0;
    const s = this.label.toString();
    for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
    return h;
  }
  override equals(other: StarObject): boolean {
    return other instanceof StarLabel && other.label.equals(this.label);
  }
  override compare(other: StarObject): number | undefined {
    const a = this.label.toString();
    const b = (other as StarLabel).label.toString();
    return a < b ? -1 : a > b ? 1 : 0;
  }
  override attr(name: string): Value | undefined {
    switch (name) {
      case 'name':
        return this.label.name;
      case 'package':
        return this.label.pkg;
      case 'workspace_name':
      case 'repo_name':
        return this.label.repo;
      case 'workspace_root':
        return this.label.repo === '' ? '' : `external/${this.label.repo}`;
      case 'relative':
      case 'same_package_label':
        return new Builtin(name, (_t, args, kwargs) => {
          const [s] = unpackArgs(name, args, kwargs, [name === 'relative' ? 'relName' : 'target_name']);
          if (typeof s !== 'string') throw new StarlarkError(`${name}: want string`);
          return new StarLabel(name === 'relative' ? parseForStarlark(s, this.label) : parseForStarlark(`:${s}`, this.label));
        });
      default:
        return undefined;
    }
  }
  override attrNames(): string[] {
    return ['name', 'package', 'relative', 'repo_name', 'same_package_label', 'workspace_name', 'workspace_root'];
  }
  override str(): string {
    return this.label.toString();
  }
  repr(_path: ReprPath): string {
    return `Label(${JSON.stringify(this.label.toString())})`;
  }
}

function parseForStarlark(raw: string, ctx: PackageContext): Label {
  try {
    return Label.parse(raw, ctx);
  } catch (e) {
    throw new StarlarkError((e as Error).message, { cause: e });
  }
}

/** `Label(s)`: parsed relative to the package of the file that is running (`context`). */
export function labelBuiltin(context: PackageContext): Builtin {
  return new Builtin('Label', (_t, args, kwargs) => {
    const [s] = unpackArgs('Label', args, kwargs, ['input']);
    if (s instanceof StarLabel) return s;
    if (typeof s !== 'string') throw new StarlarkError(`Label: for parameter input: got ${typeof s === 'object' ? s.type : typeof s}, want string`);
    return new StarLabel(parseForStarlark(s, context));
  });
}
