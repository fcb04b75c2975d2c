import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { allowedDependencies, EXTRA_ENTRIES, layerOf, LAYERS_WITH_SINGLE_ENTRY } from './layer-map.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SOURCE_DIRS = ['src', 'scheduler', 'executor'];

function sourceFiles(dir: string): string[] {
  let out: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out = out.concat(sourceFiles(full));
    else if (/\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

interface ImportEdge {
  from: string;
  to: string;
  spec: string;
}

/** Every relative import of every source file, resolved to a repository-relative path. */
function importEdges(): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const dir of SOURCE_DIRS) {
    for (const file of sourceFiles(join(ROOT, dir))) {
      const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
      for (const ref of info.importedFiles) {
        if (!ref.fileName.startsWith('.')) continue; // packages are not layers
        const target = resolve(dirname(file), ref.fileName).replace(/\.js$/, '.ts');
        edges.push({ from: relative(ROOT, file), to: relative(ROOT, target), spec: ref.fileName });
      }
    }
  }
  return edges;
}

describe('layer map of DESIGN.md', () => {
  const edges = importEdges();
  const allowed = allowedDependencies();

  it('finds the source files', () => {
    expect(edges.length).toBeGreaterThan(0);
  });

  it('has no import that points up or sideways', () => {
    const violations = edges
      .filter((e) => {
        const from = layerOf(e.from);
        const to = layerOf(e.to);
        if (!to) return from !== undefined; // layered code imports only layered code
        if (!from || from === to) return false;
        return !allowed.get(from)?.has(to);
      })
      .map((e) => `${e.from} imports ${e.spec} (${layerOf(e.to) ?? 'outside the layers'})`);
    expect(violations).toEqual([]);
  });

  it('crosses into another layer only through its index.ts', () => {
    const violations = edges
      .filter((e) => {
        const from = layerOf(e.from);
        const to = layerOf(e.to);
        if (!from || !to || from === to || !LAYERS_WITH_SINGLE_ENTRY.includes(to)) return false;
        return e.to !== `${to}/index.ts` && !EXTRA_ENTRIES[to]?.includes(e.to);
      })
      .map((e) => `${e.from} imports ${e.spec}; import ${layerOf(e.to)}/index.ts instead`);
    expect(violations).toEqual([]);
  });
});
