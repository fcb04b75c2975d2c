import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseFile, type Argument, type CallExpr, type Stmt } from '../starlark/index.js';
import { BUILTIN_REPOSITORIES } from './builtin-repos.js';

/** Registration calls found in the workspace file and the macros it calls: target patterns in call order. */
export interface MacroRegistrations {
  readonly toolchains: string[];
  readonly executionPlatforms: string[];
  /** Absolute paths of the main repository's .bzl files read (what the registrations depend on). */
  readonly sources: string[];
}

const REGISTER: Readonly<Record<string, 'toolchains' | 'executionPlatforms'>> = {
  register_toolchains: 'toolchains',
  register_execution_platforms: 'executionPlatforms',
};

/** A .bzl file's text and where its relative loads resolve. */
interface BzlSource {
  readonly text: string;
  readonly repo: string;
  readonly pkg: string;
  /** Set for a file of the main repository or a local one (a dependency the caller hashes). */
  readonly path?: string;
}

/**
 * The registrations of a WORKSPACE file, `register_toolchains(...)` and
 * `register_execution_platforms(...)` with string arguments, including those made by the macros it
 * loads and calls (`load("//:workspace.bzl", "deps")` then `deps()`, as bazel_skylib_workspace()
 * registers skylib's unittest toolchains through `native.register_toolchains`). Macros are followed
 * through their bodies' calls, to functions of the same file or loaded ones, in order, each once per
 * call chain; arguments that are not string literals (computed labels) are not seen.
 */
export function workspaceRegistrations(
  root: string,
  file: string,
  workspaceName: string,
  localRepositories: ReadonlyMap<string, string>,
): MacroRegistrations | undefined {
  const text = readFileSync(join(root, file), 'utf8');
  const out: MacroRegistrations = { toolchains: [], executionPlatforms: [], sources: [] };
  let stmts: Stmt[];
  try {
    stmts = parseFile(text, file).stmts;
  } catch {
    return undefined;
  }

  const sourceOf = (label: string, from: BzlSource): BzlSource | undefined => {
    const m = /^(?:@(@?[\w.~+-]*))?(\/\/)?([^:]*?)(?::(.+))?$/.exec(label);
    if (!m) return undefined;
    let repo = m[1] === undefined ? from.repo : m[1].replace(/^@/, '');
    if (repo === workspaceName) repo = '';
    const pkg = m[2] ? m[3]! : from.pkg;
    const name = m[4] ?? (m[2] ? m[3]!.split('/').pop()! : m[3]!);
    const rel = pkg === '' ? name : `${pkg}/${name}`;
    if (repo === '' || localRepositories.has(repo)) {
      const path = join(repo === '' ? root : localRepositories.get(repo)!, rel);
      if (!existsSync(path)) return undefined;
      return { text: readFileSync(path, 'utf8'), repo, pkg, path };
    }
    const builtin = BUILTIN_REPOSITORIES.get(repo)?.[rel];
    return builtin === undefined ? undefined : { text: builtin, repo, pkg };
  };

  const parsed = new Map<string, { defs: Map<string, Stmt[]>; loads: Map<string, readonly [string, string]> } | undefined>();
  const moduleOf = (src: BzlSource, key: string) => {
    if (!parsed.has(key)) {
      try {
        const file = parseFile(src.text, key);
        const defs = new Map<string, Stmt[]>();
        const loads = new Map<string, readonly [string, string]>();
        for (const s of file.stmts) {
          if (s.kind === 'DefStmt') defs.set(s.name.name, s.body);
          if (s.kind === 'LoadStmt') s.to.forEach((to, i) => loads.set(to.name, [s.module.value, s.from[i]!.name]));
        }
        parsed.set(key, { defs, loads });
        if (src.path !== undefined && !out.sources.includes(src.path)) out.sources.push(src.path);
      } catch {
        parsed.set(key, undefined);
      }
    }
    return parsed.get(key);
  };

  const literalArgs = (args: readonly Argument[]) =>
    args.filter((a) => a.mode === 'positional' && a.value.kind === 'StringLiteral').map((a) => (a.value as { value: string }).value);

  // Calls in a body, in source order, in every nested statement.
  const callsIn = (body: readonly Stmt[]): CallExpr[] => {
    const calls: CallExpr[] = [];
    const visit = (s: Stmt) => {
      if (s.kind === 'ExprStmt' && s.expr.kind === 'CallExpr') calls.push(s.expr);
      if (s.kind === 'IfStmt') {
        s.then.forEach(visit);
        s.orelse.forEach(visit);
      }
      if (s.kind === 'ForStmt') s.body.forEach(visit);
    };
    body.forEach(visit);
    return calls;
  };

  const WORKSPACE_SRC: BzlSource = { text, repo: '', pkg: '' };
  const walk = (calls: readonly CallExpr[], src: BzlSource, key: string, chain: readonly string[], inMacro: boolean) => {
    const mod = key === file ? { defs: new Map<string, Stmt[]>(), loads: topLoads } : moduleOf(src, key);
    if (!mod) return;
    for (const call of calls) {
      const fn = call.fn;
      // At the top of WORKSPACE the functions are global; in a macro they are `native.` members.
      const native = fn.kind === 'DotExpr' && fn.x.kind === 'Identifier' && fn.x.name === 'native' ? fn.name.name : undefined;
      const global = fn.kind === 'Identifier' ? fn.name : undefined;
      const register = REGISTER[(inMacro ? native : global) ?? ''];
      if (register) {
        out[register].push(...literalArgs(call.args));
        continue;
      }
      if (global === undefined) continue;
      const local = mod.defs.get(global);
      if (local) {
        const id = `${key}%${global}`;
        if (!chain.includes(id)) walk(callsIn(local), src, key, [...chain, id], true);
        continue;
      }
      const loaded = mod.loads.get(global);
      if (!loaded) continue;
      const target = sourceOf(loaded[0], src);
      if (!target) continue;
      const targetKey = `@${target.repo}//${target.pkg}:${loaded[0]}`;
      const targetMod = moduleOf(target, targetKey);
      const body = targetMod?.defs.get(loaded[1]);
      const id = `${targetKey}%${loaded[1]}`;
      if (body && !chain.includes(id)) walk(callsIn(body), target, targetKey, [...chain, id], true);
    }
  };
  const topLoads = new Map<string, readonly [string, string]>();
  for (const s of stmts) if (s.kind === 'LoadStmt') s.to.forEach((to, i) => topLoads.set(to.name, [s.module.value, s.from[i]!.name]));
  walk(
    stmts.flatMap((s) => (s.kind === 'ExprStmt' && s.expr.kind === 'CallExpr' ? [s.expr] : [])),
    WORKSPACE_SRC,
    file,
    [],
    false,
  );
  return out;
}
