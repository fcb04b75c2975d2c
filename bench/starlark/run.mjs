#!/usr/bin/env node
// Runs every benchmark program with `kiln starlark` and with `python3` in the same run, checks that
// both print the same output, and reports median wall time and median peak RSS per program, the
// kiln/python ratios, and their geometric means. See README.md.
//
//   node bench/starlark/run.mjs [--reps=N] [--only=NAME,NAME] [--kiln=PATH] [--python=PATH]
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bigDictProgram, callChainProgram } from './generate.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, '../..');
const GOALS = { geomeanTime: 1.0, maxTime: 2.0, maxRss: 2.0 };

function parseFlags(argv) {
  const flags = { reps: 5, only: null, kiln: join(REPO, 'bin/kiln'), python: 'python3' };
  for (const a of argv) {
    const m = /^--(reps|only|kiln|python)=(.+)$/.exec(a);
    if (!m) throw new Error(`unknown argument ${a} (use --reps=N --only=a,b --kiln=PATH --python=PATH)`);
    flags[m[1]] = m[1] === 'reps' ? Number(m[2]) : m[1] === 'only' ? m[2].split(',') : m[2];
  }
  return flags;
}

/** Peak RSS comes from GNU time's %M (KiB), written to a file so the program's stderr stays its own. */
const GNU_TIME = ['/usr/bin/time', '/bin/time'].find((p) => existsSync(p));

function measure(cmd, args, cwd) {
  const timeFile = join(cwd, '.time');
  const argv = GNU_TIME ? [GNU_TIME, '-f', '%M', '-o', timeFile, cmd, ...args] : [cmd, ...args];
  const start = process.hrtime.bigint();
  const r = spawnSync(argv[0], argv.slice(1), { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}:\n${r.stderr}`);
  let rssMb = NaN;
  if (GNU_TIME) {
    const kib = Number(readFileSync(timeFile, 'utf8').trim().split('\n').at(-1));
    rssMb = kib / 1024;
  }
  return { ms, rssMb, stdout: r.stdout };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const geomean = (xs) => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);

function programs(workDir) {
  const list = readdirSync(join(HERE, 'programs'))
    .filter((f) => f.endsWith('.star'))
    .map((f) => {
      copyFileSync(join(HERE, 'programs', f), join(workDir, f));
      return f;
    });
  writeFileSync(join(workDir, 'big_dict.star'), bigDictProgram());
  writeFileSync(join(workDir, 'call_chain.star'), callChainProgram());
  return [...list, 'big_dict.star', 'call_chain.star'].sort();
}

function main() {
  const flags = parseFlags(process.argv.slice(2));
  if (!existsSync(join(REPO, 'dist/bundle/kiln.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  if (!GNU_TIME) console.warn('GNU time not found (apt-get install time): peak memory is not measured');
  const workDir = mkdtempSync(join(tmpdir(), 'kiln-bench-starlark-'));
  const rows = [];
  let mismatches = 0;
  try {
    for (const prog of programs(workDir)) {
      const name = prog.replace(/\.star$/, '');
      if (flags.only && !flags.only.includes(name)) continue;
      const kiln = [];
      const py = [];
      for (let i = 0; i < flags.reps; i++) {
        // Alternate the two so that machine load drifts affect both alike.
        // The launcher, as users run it (it keeps NODE_EXTRA_CA_CERTS out of Node's start-up).
        kiln.push(measure(flags.kiln, ['starlark', prog], workDir));
        py.push(measure(flags.python, [prog], workDir));
      }
      const same = kiln[0].stdout === py[0].stdout;
      if (!same) {
        mismatches++;
        console.error(`${name}: outputs differ\n  kiln:   ${JSON.stringify(kiln[0].stdout)}\n  python: ${JSON.stringify(py[0].stdout)}`);
      }
      const row = {
        name,
        kilnMs: median(kiln.map((r) => r.ms)),
        pyMs: median(py.map((r) => r.ms)),
        kilnMb: median(kiln.map((r) => r.rssMb)),
        pyMb: median(py.map((r) => r.rssMb)),
        same,
      };
      row.timeRatio = row.kilnMs / row.pyMs;
      row.rssRatio = row.kilnMb / row.pyMb;
      rows.push(row);
      printRow(row);
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
  if (rows.length === 0) throw new Error('no program selected');
  const gTime = geomean(rows.map((r) => r.timeRatio));
  const gRss = geomean(rows.map((r) => r.rssRatio));
  const worstTime = Math.max(...rows.map((r) => r.timeRatio));
  const worstRss = Math.max(...rows.map((r) => r.rssRatio));
  console.log('-'.repeat(HEADER.length));
  console.log(`geometric mean: time ratio ${gTime.toFixed(2)}, RSS ratio ${gRss.toFixed(2)}  (${flags.reps} reps, medians)`);
  const verdict = (ok) => (ok ? 'met' : 'NOT met');
  console.log(`goal geomean time <= ${GOALS.geomeanTime}: ${verdict(gTime <= GOALS.geomeanTime)}`);
  console.log(`goal every program time <= ${GOALS.maxTime}: ${verdict(worstTime <= GOALS.maxTime)} (worst ${worstTime.toFixed(2)})`);
  console.log(`goal every program RSS <= ${GOALS.maxRss}x python3: ${verdict(worstRss <= GOALS.maxRss)} (worst ${worstRss.toFixed(2)})`);
  if (mismatches > 0) {
    console.error(`${mismatches} program(s) printed different output under kiln and python3`);
    process.exitCode = 1;
  }
}

const HEADER = `${'program'.padEnd(16)}${'kiln ms'.padStart(10)}${'python ms'.padStart(11)}${'ratio'.padStart(8)}${'kiln MB'.padStart(10)}${'python MB'.padStart(11)}${'RSS ratio'.padStart(11)}  output`;
let headerShown = false;
function printRow(r) {
  if (!headerShown) {
    console.log(HEADER);
    headerShown = true;
  }
  const f = (x, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
  console.log(
    `${r.name.padEnd(16)}${f(r.kilnMs).padStart(10)}${f(r.pyMs).padStart(11)}${f(r.timeRatio, 2).padStart(8)}` +
      `${f(r.kilnMb, 1).padStart(10)}${f(r.pyMb, 1).padStart(11)}${f(r.rssRatio, 2).padStart(11)}  ${r.same ? 'same' : 'DIFFERENT'}`,
  );
}

try {
  main();
} catch (e) {
  console.error(`bench/starlark: ${e.message}`);
  process.exitCode = 2;
}
