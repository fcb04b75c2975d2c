// The process floor of the build benchmarks' workspaces (bench/build, bench/starlark-rules): what the
// actions' own processes cost on this machine, with no build tool at all. Every action's command runs
// under `/bin/bash -c`, as a sandbox or an executor starts it, from bash loops (whose forks are cheap),
// as many side by side as the build runs jobs, on files laid out as the actions read and write them. No
// tool that runs these actions at that parallelism can finish sooner, so `floor wall / Bazel's wall` is
// the best cold ratio any tool could reach here, whatever its own overhead. (On the 2-core machines of
// Nov 2026, two loops side by side take as long as one: process creation does not scale across cores.)
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { measure } from './measure.mjs';

/** The commands of package `i`'s eleven actions (bench/build/generate.mjs), in an order that runs. */
function packageCommands(i, groupHead) {
  return [
    'cat input.txt > copy.txt',
    'tr a-z A-Z < copy.txt > upper.txt',
    'tr A-Z a-z < upper.txt > lower.txt',
    `echo package ${i} words > words.txt`,
    'echo left > left.txt; cat input.txt > right.txt',
    'cat copy.txt upper.txt lower.txt words.txt left.txt right.txt > joined.txt',
    '../../tools/shout.sh < joined.txt > shouted.txt',
    'wc -c < joined.txt > count.txt',
    "tr -d ' ' < right.txt > squeezed.txt",
    `cat ../${groupHead}/copy.txt lower.txt > neighbor.txt`,
    'cat shouted.txt count.txt squeezed.txt neighbor.txt > final.txt',
  ];
}

/**
 * Runs the actions of `packages` packages as bare processes in `dir`, `jobs` bash loops at a time (each
 * takes whole groups of ten packages, so every action finds what it reads); returns the CPU seconds
 * (user + sys, every process included), the wall time, and the number of actions.
 */
export function processFloor(dir, packages, jobs = 1) {
  const root = join(dir, 'process-floor');
  mkdirSync(join(root, 'tools'), { recursive: true });
  const workers = Array.from({ length: jobs }, () => ['#!/bin/bash', 'set -e', `cd ${JSON.stringify(root)}`]);
  for (let i = 0; i < packages; i++) {
    const pkg = `p/pkg${i}`;
    mkdirSync(join(root, pkg), { recursive: true });
    writeFileSync(join(root, pkg, 'input.txt'), `input of package ${i}\n`);
    const lines = workers[Math.floor(i / 10) % jobs];
    lines.push(`cd ${pkg}`);
    for (const cmd of packageCommands(i, `pkg${i - (i % 10)}`)) lines.push(`/bin/bash -c ${shellQuote(cmd)}`);
    lines.push('cd ../..');
  }
  // The shared tool first, as its own action makes it; then the loops side by side.
  const driver = ['#!/bin/bash', 'set -e', `cd ${JSON.stringify(root)}`];
  driver.push(`/bin/bash -c ${shellQuote("printf '#!/bin/sh\\ntr a-z A-Z\\n' > tools/shout.sh; chmod +x tools/shout.sh")}`);
  workers.forEach((lines, w) => {
    writeFileSync(join(root, `worker${w}.sh`), `${lines.join('\n')}\n`);
    driver.push(`/bin/bash worker${w}.sh &`);
  });
  driver.push('wait');
  const script = join(root, 'run.sh');
  writeFileSync(script, `${driver.join('\n')}\n`, { mode: 0o755 });
  const m = measure(['/bin/bash', script], root);
  return { cpuS: m.cpuS, ms: m.ms, actions: packages * 11 + 1 };
}

function shellQuote(s) {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}
