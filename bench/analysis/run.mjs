#!/usr/bin/env node
// Analysis benchmark: analysis of the loading benchmark's workspace, Kiln cold (`kiln build
// --nobuild //...`, fresh process, empty output base) against Bazel 2.1.0 `build --nobuild //...` cold (--batch, so the
// server start is included). The generated workspace has cross-package dependencies on targets
// without visibility, so both tools run with --nocheck_visibility.
//
//   node bench/analysis/run.mjs [--sizes=100,1000] [--bazel=PATH|none]
// Needs `npm run build` first. Bazel comes from KILN_BAZEL or .cache/bazel/2.1.0/bazel.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateWorkspace } from '../loading/generate.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, '../..');

function parseFlags(argv) {
  const defaultBazel = process.env.KILN_BAZEL ?? join(REPO, '.cache/bazel/2.1.0/bazel');
  const flags = { sizes: [100, 1000], bazel: existsSync(defaultBazel) ? defaultBazel : null };
  for (const a of argv) {
    const m = /^--(sizes|bazel)=(.+)$/.exec(a);
    if (!m) throw new Error(`unknown argument ${a}`);
    flags[m[1]] = m[1] === 'sizes' ? m[2].split(',').map(Number) : m[2] === 'none' ? null : m[2];
  }
  return flags;
}

function timed(argv, cwd, okStatuses = [0]) {
  const start = process.hrtime.bigint();
  const r = spawnSync(argv[0], argv.slice(1), { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (!okStatuses.includes(r.status)) throw new Error(`${argv.join(' ')} exited ${r.status}:\n${r.stderr}`);
  return { ms, out: r.stdout.trim(), status: r.status };
}

const flags = parseFlags(process.argv.slice(2));
for (const size of flags.sizes) {
  const dir = mkdtempSync(join(tmpdir(), `kiln-bench-analysis-${size}-`));
  try {
    const ws = join(dir, 'ws');
    generateWorkspace(ws, size);
    // What a user runs: the CLI, loading included, in a new process with an empty output base.
    const kiln = timed([join(REPO, 'bin/kiln'), 'build', `--output_base=${join(dir, 'kiln-ob')}`, '--nobuild', '--nocheck_visibility', '//...'], ws);
    const counts = timed([process.execPath, join(HERE, 'analyze-workspace.mjs'), ws, join(dir, 'kiln-ob2'), '--nocheck_visibility'], ws);
    console.log(`${size} packages: kiln build --nobuild cold ${(kiln.ms / 1000).toFixed(2)} s (${counts.out})`);
    if (flags.bazel) {
      // Offline, Bazel cannot fetch the repositories sh_test needs (rules_cc, coverage tools): with
      // --keep_going it analyses everything else and exits 1; that run is what is timed.
      const bazel = timed(
        [flags.bazel, `--output_base=${join(dir, 'bazel-ob')}`, '--batch', 'build', '--nobuild', '--keep_going', '--nocheck_visibility', '//...'],
        ws,
        [0, 1],
      );
      const note = bazel.status === 0 ? '' : ' (exit 1: some external repositories could not be fetched offline)';
      console.log(`  bazel cold (--batch) ${(bazel.ms / 1000).toFixed(2)} s${note}; ratio kiln/bazel = ${(kiln.ms / bazel.ms).toFixed(3)} (goal <= 0.333)`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
