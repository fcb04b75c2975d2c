import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * `src/cli` holds commands, flags, rc files and printing only (DESIGN.md §2): the build itself is
 * driven by `src/build`. So from the layers below the build tool the command line takes only what
 * parsing options and printing need, by name; a command whose whole job is one engine (`kiln query`,
 * `kiln starlark`) may use that engine.
 */
const ALLOWED_NAMES: Readonly<Record<string, readonly string[]>> = {
  'src/analysis': ['parseBuildOptions', 'BUILD_OPTIONS', 'formatDuration'],
  'src/exec': ['PlainReporter', 'TerminalReporter', 'OUTPUT_DIR_NAME'],
  // The workspace root names `%workspace%` in rc files before any workspace is opened.
  'src/loading': ['Label', 'findWorkspaceRoot'],
  'src/skyframe': [],
  'src/actions': [],
  'src/remote': [],
  'src/query': ['parseQueryOptions'],
  'src/starlark': [],
};

/** The one command that may use each engine whole. */
const ENGINE_COMMANDS: Readonly<Record<string, string>> = {
  'src/query': 'src/cli/commands/query.ts',
  'src/starlark': 'src/cli/commands/starlark.ts',
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? sourceFiles(full) : name.endsWith('.ts') ? [full] : [];
  });
}

/** Every value name a file imports from each other module: `import { a, type B } from '...'` gives `a` (types are free). */
function importedValues(file: string): { spec: string; names: string[] }[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const out: { spec: string; names: string[] }[] = [];
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const clause = statement.importClause;
    if (!clause || clause.isTypeOnly) continue;
    const names: string[] = [];
    if (clause.name) names.push('default');
    const bindings = clause.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) names.push('*');
    if (bindings && ts.isNamedImports(bindings)) for (const e of bindings.elements) if (!e.isTypeOnly) names.push((e.propertyName ?? e.name).text);
    out.push({ spec: statement.moduleSpecifier.text, names });
  }
  return out;
}

describe('src/cli holds commands, flags, rc files and printing only', () => {
  const files = sourceFiles(join(ROOT, 'src/cli'));

  it('reads the command line files', () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it('takes from loading, analysis and execution only what parsing options and printing need', () => {
    const violations: string[] = [];
    for (const file of files) {
      const rel = relative(ROOT, file);
      for (const { spec, names } of importedValues(file)) {
        if (!spec.startsWith('.')) continue;
        const target = relative(ROOT, resolve(dirname(file), spec));
        const layer = /^(src\/[^/]+)\//.exec(target)?.[1];
        const allowed = layer === undefined ? undefined : ALLOWED_NAMES[layer];
        if (allowed === undefined || ENGINE_COMMANDS[layer!] === rel) continue;
        for (const name of names) if (!allowed.includes(name)) violations.push(`${rel} imports ${name} from ${layer}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('has no file of the build tool left in it', () => {
    const buildToolFiles = ['analysis-phase.ts', 'build-pipeline.ts', 'build-graph-cache.ts', 'null-build-record.ts', 'test-phase.ts', 'output-base.ts'];
    expect(files.map((f) => relative(join(ROOT, 'src/cli'), f)).filter((f) => buildToolFiles.includes(f))).toEqual([]);
  });
});
