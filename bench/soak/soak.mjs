#!/usr/bin/env node
// Soak: Kiln's cluster as processes (`kiln scheduler` with an operations journal and a bounded block
// store, two `kiln executor`s) under a stream of builds from several clients for N minutes, with one
// executor killed (SIGKILL) and restarted every `--executor-restart-s` seconds and the scheduler
// restarted (SIGTERM, drained) once, half-way. Clients: Kiln (`kiln build --remote_executor`), some
// with `--remote_download_minimal`, each build a mix of cached and new actions; and Bazel 2.1.0 when
// KILN_BAZEL names it. Every output is compared with what the action must produce (no lost or
// corrupt results). Every 5 s it samples each server process's RSS and open file descriptors (from
// /proc) and the store's disk use, and reports them against the budgets. Not part of the test suite.
//
// Build first (npm run build). Usage:
//   node bench/soak/soak.mjs [--minutes 30] [--clients 4] [--packages 20] [--executor-restart-s 300]
//     [--store-mib 64] [--rss-budget-mib 300] [--fd-budget 512]
// Figures and how to read them: bench/soak/README.md.
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const KILN = join(repo, 'bin/kiln');
const BAZEL = process.env.KILN_BAZEL ?? '';

const args = Object.fromEntries(
  process.argv
    .slice(2)
    .map((a, i, all) => (a.startsWith('--') ? [a.slice(2), all[i + 1]] : undefined))
    .filter(Boolean),
);
const MINUTES = Number(args.minutes ?? 30);
const CLIENTS = Number(args.clients ?? 4);
const PACKAGES = Number(args.packages ?? 20);
const EXECUTOR_RESTART_S = Number(args['executor-restart-s'] ?? 300);
const STORE_BYTES = Number(args['store-mib'] ?? 64) * 2 ** 20;
const RSS_BUDGET = Number(args['rss-budget-mib'] ?? 300) * 2 ** 20;
const FD_BUDGET = Number(args['fd-budget'] ?? 512);
const SAMPLE_MS = 5000;

const dir = await mkdtemp(join(tmpdir(), 'kiln-soak-'));
// A root executor's sandboxed actions run as nobody, which must reach the build directories.
await chmod(dir, 0o711);
const log = (m) => process.stderr.write(`[soak ${((Date.now() - started) / 1000).toFixed(0)}s] ${m}\n`);
const started = Date.now();

// ---- the cluster ----

/** A server role's process: endpoint (first stdout line), JSON log kept, exit awaited. */
function startRole(name, roleArgs) {
  const child = spawn(KILN, roleArgs, { cwd: dir, env: { ...process.env, TMPDIR: dir, KILN_LOG_FORMAT: 'json' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const role = { name, child, stdout: '', stderr: '', exited: new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal))) };
  child.stdout.on('data', (c) => (role.stdout += c));
  child.stderr.on('data', (c) => {
    role.stderr += c;
    // Keep the tail only: a long soak logs a line per action.
    if (role.stderr.length > 1 << 20) role.stderr = role.stderr.slice(-(1 << 19));
  });
  role.endpoint = () =>
    new Promise((resolve, reject) => {
      const check = () => (role.stdout.includes('\n') ? resolve(role.stdout.split('\n')[0]) : undefined);
      child.stdout.on('data', check);
      void role.exited.then((code) => reject(new Error(`${name} exited (${code}) before its endpoint:\n${role.stderr.slice(-4000)}`)));
      check();
    });
  return role;
}

const schedulerConfig = join(dir, 'scheduler.json');
await writeFile(
  schedulerConfig,
  JSON.stringify({
    storage: { kind: 'blocks', path: 'store', maxBytes: STORE_BYTES },
    execution: { operationsFile: 'operations.jsonl', drainTimeoutMs: 10_000 },
  }),
);
let scheduler = startRole('scheduler', ['scheduler', '--config', schedulerConfig]);
const endpoint = await scheduler.endpoint();
const port = endpoint.split(':').at(-1);
const executors = [0, 1].map((i) => startExecutor(i));
function startExecutor(i) {
  return startRole(`executor-${i}`, ['executor', '--scheduler', endpoint, '--slots', '2', '--name', `soak-${i}`, '--work-dir', join(dir, `executor-${i}`)]);
}
log(`cluster at ${endpoint}: scheduler pid ${scheduler.child.pid}, executors ${executors.map((e) => e.child.pid).join(', ')}`);

// ---- the workspace: PACKAGES packages of genrules; a build's salt makes some of them new ----

async function writeWorkspace(root, salt) {
  await mkdir(root, { recursive: true });
  await writeFile(join(root, 'MODULE.bazel'), '');
  await writeFile(join(root, 'WORKSPACE'), 'workspace(name = "soak")\n');
  for (let p = 0; p < PACKAGES; p++) {
    const pkg = join(root, `p${p}`);
    await mkdir(pkg, { recursive: true });
    // One package in four changes with every build (cache misses); the others stay (cache hits).
    const value = p % 4 === 0 ? `${p}-${salt}` : `${p}`;
    await writeFile(join(pkg, 'in.txt'), `${value}\n`);
    await writeFile(
      join(pkg, 'BUILD'),
      [
        'genrule(name = "a", srcs = ["in.txt"], outs = ["a.txt"], cmd = "tr 0-9 a-j < $< > $@")',
        'genrule(name = "b", srcs = [":a", "in.txt"], outs = ["b.txt"], cmd = "cat $(SRCS) $(SRCS) > $@")',
        // 256 KiB more, after the input: what fills the store (and makes it evict) over the run.
        `genrule(name = "big", srcs = [":b"], outs = ["big.bin"], cmd = "(cat $<; head -c 262144 /dev/zero | tr '\\\\0' x) > $@")`,
        '',
      ].join('\n'),
    );
  }
}

/** What //pN:b must contain for the value in its in.txt. */
function expectedB(value) {
  const a = `${value.replace(/[0-9]/g, (d) => String.fromCharCode(97 + Number(d)))}\n`;
  return `${a}${value}\n${a}${value}\n`;
}

function run(cmd, cmdArgs, cwd, env) {
  return new Promise((resolve) => {
    const child = spawn(cmd, cmdArgs, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** What //pN:big must contain: b.txt, then 256 KiB of x. */
function expectedBig(b) {
  return b + 'x'.repeat(262144);
}

const results = { builds: 0, failed: 0, wrongOutputs: 0, byClient: {}, failures: [] };
let stopping = false;

async function client(index) {
  const kind = BAZEL && index === CLIENTS - 1 ? 'bazel' : 'kiln';
  const minimal = kind === 'kiln' && index % 2 === 1;
  const root = join(dir, `client-${index}`);
  const home = join(dir, `home-${index}`);
  await mkdir(home, { recursive: true });
  const stats = (results.byClient[`${index} ${kind}${minimal ? ' --remote_download_minimal' : ''}`] = { builds: 0, failed: 0 });
  for (let salt = 0; !stopping; salt++) {
    await writeWorkspace(root, `${index}-${salt}`);
    const targets = Array.from({ length: PACKAGES }, (_, p) => [`//p${p}:b`, `//p${p}:big`]).flat();
    const common = [`--remote_executor=${endpoint}`, '--remote_retries=10', ...(minimal ? ['--remote_download_minimal'] : [])];
    const env = { PATH: process.env.PATH, HOME: home, TMPDIR: dir };
    const outcome =
      kind === 'bazel'
        ? await run(
            BAZEL,
            [`--output_user_root=${join(dir, `bazel-root-${index}`)}`, '--batch', 'build', '--noshow_progress', ...common, ...targets],
            root,
            env,
          )
        : await run(KILN, ['build', `--output_base=${join(dir, `output-base-${index}`)}`, ...common, ...targets], root, env);
    results.builds++;
    stats.builds++;
    if (outcome.code !== 0) {
      results.failed++;
      stats.failed++;
      results.failures.push({ client: index, salt, code: outcome.code, tail: outcome.output.slice(-1500) });
      log(`client ${index} build ${salt} failed (exit ${outcome.code})`);
      continue;
    }
    if (minimal) continue; // outputs stay remote
    const bin = kind === 'bazel' ? 'bazel-bin' : 'kiln-bin';
    for (let p = 0; p < PACKAGES; p++) {
      const value = (await readFile(join(root, `p${p}`, 'in.txt'), 'utf8')).trim();
      const got = await readFile(join(root, bin, `p${p}`, 'b.txt'), 'utf8').catch(() => undefined);
      if (got !== expectedB(value)) {
        results.wrongOutputs++;
        log(`client ${index} build ${salt}: //p${p}:b is wrong or missing`);
      }
      const big = await readFile(join(root, bin, `p${p}`, 'big.bin'), 'utf8').catch(() => undefined);
      if (big !== expectedBig(expectedB(value))) {
        results.wrongOutputs++;
        log(`client ${index} build ${salt}: //p${p}:big is wrong or missing`);
      }
    }
  }
}

// ---- sampling ----

const samples = [];
async function processFigures(pid) {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
    const fds = (await readdir(`/proc/${pid}/fd`)).length;
    return { rss, fds };
  } catch {
    return undefined; // between a kill and a restart
  }
}
async function diskBytes(path) {
  let total = 0;
  for (const entry of await readdir(path, { withFileTypes: true }).catch(() => [])) {
    const full = join(path, entry.name);
    if (entry.isDirectory()) total += await diskBytes(full);
    else if (entry.isFile()) total += (await stat(full)).blocks * 512;
  }
  return total;
}
async function sample() {
  const at = (Date.now() - started) / 1000;
  const roles = [scheduler, ...executors];
  const figures = {};
  for (const role of roles) figures[role.name] = await processFigures(role.child.pid);
  samples.push({ at, figures, storeBytes: await diskBytes(join(dir, 'store')) });
}

// ---- the run ----

const timer = setInterval(() => void sample(), SAMPLE_MS);
const clients = Array.from({ length: CLIENTS }, (_, i) => client(i));
const restarts = { executors: 0, scheduler: 0 };
const chaos = (async () => {
  const end = started + MINUTES * 60_000;
  let nextExecutorKill = started + EXECUTOR_RESTART_S * 1000;
  let schedulerRestarted = false;
  while (Date.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    if (Date.now() >= nextExecutorKill) {
      const i = restarts.executors % executors.length;
      executors[i].child.kill('SIGKILL');
      await executors[i].exited;
      executors[i] = startExecutor(i);
      restarts.executors++;
      nextExecutorKill += EXECUTOR_RESTART_S * 1000;
      log(`executor ${i} killed and restarted (pid ${executors[i].child.pid})`);
    }
    if (!schedulerRestarted && Date.now() >= started + (MINUTES * 60_000) / 2) {
      schedulerRestarted = true;
      scheduler.child.kill('SIGTERM');
      const code = await scheduler.exited;
      scheduler = startRole('scheduler', ['scheduler', '--config', schedulerConfig, '--port', port]);
      await scheduler.endpoint();
      restarts.scheduler++;
      log(`scheduler stopped (exit ${code}) and restarted (pid ${scheduler.child.pid})`);
    }
  }
  stopping = true;
})();
await chaos;
await Promise.all(clients);
clearInterval(timer);
await sample();

// ---- report ----

const byRole = {};
for (const s of samples) {
  for (const [name, f] of Object.entries(s.figures)) {
    if (!f) continue;
    const r = (byRole[name] ??= { rss: [], fds: [] });
    r.rss.push(f.rss);
    r.fds.push(f.fds);
  }
}
const mib = (n) => (n / 2 ** 20).toFixed(1);
const report = {
  minutes: MINUTES,
  clients: CLIENTS,
  packages: PACKAGES,
  bazel: BAZEL !== '',
  builds: results.builds,
  failed: results.failed,
  wrongOutputs: results.wrongOutputs,
  byClient: results.byClient,
  restarts,
  storeBudgetMiB: Number(mib(STORE_BYTES)),
  storeMaxMiB: Number(mib(Math.max(0, ...samples.map((s) => s.storeBytes)))),
  roles: Object.fromEntries(
    Object.entries(byRole).map(([name, r]) => [
      name,
      {
        rssMaxMiB: Number(mib(Math.max(...r.rss))),
        // Growth: the last quarter's mean against the second quarter's (after warm-up).
        rssGrowthMiB: Number(
          mib(mean(r.rss.slice(-Math.ceil(r.rss.length / 4))) - mean(r.rss.slice(Math.floor(r.rss.length / 4), Math.floor(r.rss.length / 2)) || r.rss)),
        ),
        fdsMax: Math.max(...r.fds),
      },
    ]),
  ),
};
function mean(xs) {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}
const overBudget = [
  ...Object.entries(report.roles).flatMap(([name, r]) => [
    ...(r.rssMaxMiB * 2 ** 20 > RSS_BUDGET ? [`${name} RSS ${r.rssMaxMiB} MiB > ${mib(RSS_BUDGET)} MiB`] : []),
    ...(r.fdsMax > FD_BUDGET ? [`${name} ${r.fdsMax} fds > ${FD_BUDGET}`] : []),
  ]),
  // The block store may exceed its budget by one block while it rescues pinned blobs.
  ...(report.storeMaxMiB > report.storeBudgetMiB * 1.1 ? [`store ${report.storeMaxMiB} MiB > ${report.storeBudgetMiB} MiB (+10%)`] : []),
];
report.withinBudget = overBudget.length === 0;
report.overBudget = overBudget;
console.log(JSON.stringify(report, null, 2));
if (results.failures.length > 0) await writeFile(join(repo, 'bench/soak/last-failures.json'), JSON.stringify(results.failures, null, 2));

scheduler.child.kill('SIGTERM');
for (const e of executors) e.child.kill('SIGTERM');
await Promise.all([scheduler.exited, ...executors.map((e) => e.exited)]);
await rm(dir, { recursive: true, force: true }).catch(() => undefined);
process.exit(results.failed + results.wrongOutputs === 0 && report.withinBudget ? 0 : 1);
