import type { Position } from '../core/index.js';
import type { AttrValue } from './rules/attribute.js';
import type { PackageDefaults } from './package-builder.js';
import type { GeneratorInfo, Target } from './target.js';

/** One error of a package, already positioned. */
export interface PackageError {
  readonly message: string;
  readonly pos?: Position;
}

/** A loaded package: its targets (declaration order) and the errors its BUILD file produced. */
export interface Package {
  readonly repo: string;
  readonly pkg: string;
  /** Display path of the BUILD file (workspace-relative, or external/<repo>/...). */
  readonly buildFile: string;
  readonly targets: ReadonlyMap<string, Target>;
  readonly errors: readonly PackageError[];
  readonly defaults: PackageDefaults;
}

/** `//pkg` or `@repo//pkg`. */
export function packageId(repo: string, pkg: string): string {
  return `${repo === '' ? '' : `@${repo}`}//${pkg}`;
}

interface EncodedPackage {
  r: string;
  p: string;
  b: string;
  t: unknown[];
  e: PackageError[];
  d: PackageDefaults;
}

type Where = [number, number] | Position;

/** Locations in the package's own BUILD file (nearly all of them) are stored as [line, col]. */
function where(pos: Position, buildFile: string): Where {
  return pos.file === buildFile ? [pos.line, pos.col] : pos;
}

function position(w: Where, buildFile: string): Position {
  return Array.isArray(w) ? { file: buildFile, line: w[0], col: w[1] } : w;
}

/** Compact JSON for the persistent cache: targets as tuples, attribute maps as pair lists. */
export function encodePackage(p: Package): EncodedPackage {
  const b = p.buildFile;
  const t = [...p.targets.values()].map((x): unknown => {
    switch (x.kind) {
      case 'rule':
        return ['r', x.name, where(x.location, b), x.ruleClass, [...x.attrs], x.outputs, x.dependencies, x.generator ?? 0, x.starlarkDefined ? 1 : 0, x.ruleDefinition ?? 0];
      case 'source':
        return ['s', x.name, where(x.location, b), x.visibility ?? 0];
      case 'generated':
        return ['g', x.name, where(x.location, b), x.generatingRule];
      case 'package_group':
        return ['p', x.name, where(x.location, b), x.packages, x.includes];
    }
  });
  return { r: p.repo, p: p.pkg, b, t, e: [...p.errors], d: p.defaults };
}

export function decodePackage(data: unknown): Package {
  const e = data as EncodedPackage;
  const b = e.b;
  const targets = new Map<string, Target>();
  for (const raw of e.t as unknown[][]) {
    const name = raw[1] as string;
    const location = position(raw[2] as Where, b);
    let t: Target;
    switch (raw[0]) {
      case 'r': {
        const generator = raw[7] as GeneratorInfo | 0;
        t = {
          kind: 'rule',
          name,
          ruleClass: raw[3] as string,
          location,
          attrs: new Map(raw[4] as [string, AttrValue][]),
          outputs: raw[5] as string[],
          dependencies: raw[6] as string[],
          ...(generator ? { generator } : {}),
          ...(raw[8] === 1 ? { starlarkDefined: true } : {}),
          ...(raw[9] ? { ruleDefinition: raw[9] as string } : {}),
        };
        break;
      }
      case 's': {
        const visibility = raw[3] as string[] | 0;
        t = { kind: 'source', name, location, ...(visibility ? { visibility } : {}) };
        break;
      }
      case 'g':
        t = { kind: 'generated', name, location, generatingRule: raw[3] as string };
        break;
      default:
        t = { kind: 'package_group', name, location, packages: raw[3] as string[], includes: raw[4] as string[] };
    }
    targets.set(name, t);
  }
  return { repo: e.r, pkg: e.p, buildFile: b, targets, errors: e.e, defaults: e.d };
}
