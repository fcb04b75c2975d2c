/**
 * The layer map of ../shared/DESIGN.md §2, as data. `A: [B, ...]` means A may import B directly;
 * what B may import, A may import too (the map is read transitively).
 */
export const DIRECT_DEPENDENCIES: Readonly<Record<string, readonly string[]>> = {
  'proto/gen': [],
  'src/core': ['proto/gen'],
  'src/starlark': ['src/core'],
  'src/skyframe': ['src/core'],
  'src/loading': ['src/starlark', 'src/skyframe'],
  'src/query': ['src/loading'],
  'src/docgen': ['src/loading'],
  'src/actions': ['src/core'],
  'src/analysis': ['src/query', 'src/docgen', 'src/actions'],
  'src/remote': ['src/core', 'src/actions'],
  'src/exec': ['src/analysis', 'src/remote'],
  // The build tool (Bazel's lib/buildtool): loading, analysis, execution and test runs for a request.
  'src/build': ['src/exec'],
  // The CLI is the top: `kiln scheduler`, `kiln executor` and `kiln cluster up` start those mains.
  'src/cli': ['src/build', 'scheduler', 'executor'],
  // The scheduler and the executor never import each other; they meet only in proto/kiln/worker/v1.
  scheduler: ['src/core', 'src/remote'],
  executor: ['src/core', 'src/remote'],
};

/** Layers whose own index.ts is the only file other layers may import. proto/gen is generated code. */
export const LAYERS_WITH_SINGLE_ENTRY = Object.keys(DIRECT_DEPENDENCIES).filter((l) => l !== 'proto/gen');

/**
 * A layer's entries besides its index.ts. core's sandbox and blob stores have their own, so that a
 * command that needs neither (query, info) loads neither, nor child_process (the bundle is split by
 * what each command imports, and a barrel that re-exports them would pull them into every command).
 */
export const EXTRA_ENTRIES: Readonly<Record<string, readonly string[]>> = {
  'src/core': [
    'src/core/sandbox/index.ts',
    'src/core/blobstore/index.ts',
    'src/core/health/index.ts',
    'src/core/metrics/index.ts',
    'src/core/options/index.ts',
    'src/core/log/index.ts',
  ],
  // Opening a workspace and its output base, which commands that build nothing (query, clean) need alone.
  'src/build': ['src/build/workspace/index.ts'],
};

export function allowedDependencies(): Map<string, Set<string>> {
  const closure = new Map<string, Set<string>>();
  const visit = (layer: string): Set<string> => {
    const known = closure.get(layer);
    if (known) return known;
    const reach = new Set<string>();
    closure.set(layer, reach);
    for (const dep of DIRECT_DEPENDENCIES[layer] ?? []) {
      reach.add(dep);
      for (const d of visit(dep)) reach.add(d);
    }
    return reach;
  };
  for (const layer of Object.keys(DIRECT_DEPENDENCIES)) visit(layer);
  return closure;
}

/** The layer a repository-relative path belongs to, or undefined outside the layered code. */
export function layerOf(relPath: string): string | undefined {
  const p = relPath.split('\\').join('/');
  if (p.startsWith('proto/gen/')) return 'proto/gen';
  if (p.startsWith('scheduler/')) return 'scheduler';
  if (p.startsWith('executor/')) return 'executor';
  const m = /^src\/([^/]+)\//.exec(p);
  return m ? `src/${m[1]}` : undefined;
}
