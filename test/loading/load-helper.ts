import { join } from 'node:path';
import { formatPosition } from '../../src/core/index.js';
import { PackageLoader, Workspace, type Package, type RuleTarget } from '../../src/loading/index.js';
import { workspaceFixture } from './fixture.js';

/** Loads `pkg` of a fixture workspace with a private output base inside the fixture. */
export function loadFixture(files: Record<string, string>, pkg = 'pkg'): { pkg: Package; loader: PackageLoader; root: string } {
  const root = workspaceFixture({ WORKSPACE: '', ...files });
  const loader = newLoader(root);
  return { pkg: loader.loadPackage('', pkg), loader, root };
}

export function newLoader(root: string, events?: string[]): PackageLoader {
  return new PackageLoader({
    workspace: new Workspace(root, ''),
    outputBase: join(root, '.kiln-output-base'),
    ...(events ? { onEvent: (kind, msg) => void events.push(`${kind}: ${msg}`) } : {}),
  });
}

/** `file:line:col: message` of each package error. */
export function errorsOf(p: Package): string[] {
  return p.errors.map((e) => (e.pos ? `${formatPosition(e.pos)}: ${e.message}` : e.message));
}

export function rule(p: Package, name: string): RuleTarget {
  const t = p.targets.get(name);
  if (t?.kind !== 'rule') throw new Error(`no rule ${name}`);
  return t;
}
