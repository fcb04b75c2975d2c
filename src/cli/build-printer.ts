import { readFileSync } from 'node:fs';
import type { OutputDirectories } from '../analysis/index.js';
import type { BuildEvent, BuildUi, ClosingReport, TestRunFinished } from '../build/index.js';
import { formatPosition } from '../core/index.js';
import { PlainReporter, TerminalReporter, type ClosingOptions, type ExecutionReporter } from '../exec/index.js';
import type { CliIO } from './io.js';
import { summaryBlocks } from './test-summary.js';

/** A build event in Bazel's words, or nothing for an event Bazel does not print. */
export function formatBuildEvent(event: BuildEvent): string {
  const at = (pos: { file: string; line: number; col: number } | undefined) => (pos ? `${formatPosition(pos)}: ` : '');
  switch (event.kind) {
    case 'error':
      return `ERROR: ${at(event.pos)}${event.message}\n`;
    case 'warning':
      return `WARNING: ${at(event.pos)}${event.message}\n`;
    case 'info':
      return `INFO: ${event.message}\n`;
    case 'debug':
      return `DEBUG: ${event.where === undefined ? '' : `${event.where}: `}${event.message}\n`;
    case 'no-patterns':
      return `WARNING: Usage: kiln ${event.command} <options> <targets>.\nInvoke \`kiln help ${event.command}\` for full description of usage and options.\n`;
    case 'analyzed': {
      const aspects = event.aspectsConfigured ? ` and ${plural(event.aspectsConfigured, 'aspect')}` : '';
      const counts = `${plural(event.packagesLoaded, 'package')} loaded, ${plural(event.targetsConfigured, 'target')}${aspects} configured`;
      return `INFO: Analyzed ${plural(event.targets, 'target')} (${counts}).\nINFO: Found ${foundTargets(event.targets, event.tests)}...\n`;
    }
    case 'waiting-for-lock':
      return `Another command (pid=${event.pid}) is using the output base ${event.outputBase}. Waiting for it to complete...\n`;
    case 'nothing-executed':
      return 'INFO: Build completed successfully, 0 total actions\n';
    case 'build-failed':
      return 'ERROR: Build did NOT complete successfully\n';
  }
}

function plural(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

/** `3 targets`; for `kiln test`, `2 test targets` or `1 target and 0 test targets` (the others). */
function foundTargets(n: number, tests: number | undefined): string {
  if (tests === undefined) return plural(n, 'target');
  const others = n - tests;
  return others > 0 ? `${plural(others, 'target')} and ${plural(tests, 'test target')}` : plural(tests, 'test target');
}

/** How the printer says things: Bazel's flags of the command line's face. */
export interface PrinterOptions {
  /** `--show_result`: the per-target block only when at most this many targets were requested (Bazel's default 1). */
  readonly showResult: number;
  /** `--symlink_prefix`: output paths are shown through the convenience symlinks it names (`/`: none). */
  readonly symlinkPrefix: string;
  /** `--curses`: the live, rewriting progress (`auto`: on a terminal). */
  readonly curses: 'yes' | 'no' | 'auto';
}

const DEFAULT_PRINTER_OPTIONS: PrinterOptions = { showResult: 1, symlinkPrefix: 'kiln-', curses: 'auto' };

/** Bazel's `Target //pkg:x up-to-date:` block of a successful build, with paths through the convenience symlinks. */
function targetLines(report: ClosingReport, options: PrinterOptions): string {
  if (report.aspects) return aspectLines(report, report.aspects, options);
  if (!report.success || report.targets.length > options.showResult) return '';
  let text = '';
  for (const t of report.targets) {
    if (t.files.length === 0) {
      text += `Target ${t.label} up-to-date (nothing to build)\n`;
      continue;
    }
    text += `Target ${t.label} up-to-date:\n`;
    for (const f of t.files) text += `  ${displayPath(f, report.outputDirectories, options.symlinkPrefix)}\n`;
  }
  return text;
}

/** With `--aspects` Bazel shows the aspects instead of the targets: `Aspect //x.bzl%a of //pkg:t up-to-date:`. */
function aspectLines(report: ClosingReport, aspects: NonNullable<ClosingReport['aspects']>, options: PrinterOptions): string {
  if (!report.success || aspects.length > options.showResult) return '';
  let text = '';
  for (const a of aspects) {
    if (a.files.length === 0) {
      text += `Aspect ${a.aspect} of ${a.target} up-to-date (nothing to build)\n`;
      continue;
    }
    text += `Aspect ${a.aspect} of ${a.target} up-to-date:\n`;
    for (const f of a.files) text += `  ${displayPath(f, report.outputDirectories, options.symlinkPrefix)}\n`;
  }
  return text;
}

/** `bazel-out/k8-fastbuild/bin/pkg/x` → `kiln-bin/pkg/x` (the path through the convenience symlink of `prefix`; `/`: the path itself). */
export function displayPath(execPath: string, dirs: Pick<OutputDirectories, 'bin' | 'genfiles'>, prefix = DEFAULT_PRINTER_OPTIONS.symlinkPrefix): string {
  if (prefix === '/') return execPath;
  const bin = `${dirs.bin}/`;
  if (execPath.startsWith(bin)) return `${prefix}bin/${execPath.slice(bin.length)}`;
  const genfiles = `${dirs.genfiles}/`;
  if (execPath.startsWith(genfiles)) return `${prefix}genfiles/${execPath.slice(genfiles.length)}`;
  return execPath;
}

/** A test log without the header the setup script writes (up to the line of dashes), as Bazel prints it. */
function logBody(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return '';
  }
  const marker = '\n-----------------------------------------------------------------------------\n';
  const at = text.indexOf(marker);
  const body = at < 0 ? text : text.slice(at + marker.length);
  return body === '' || body.endsWith('\n') ? body : `${body}\n`;
}

/**
 * The command line's face for `build`, `test` and `run`: events on stderr, the terminal reporter on
 * a terminal (plain lines otherwise), test logs on stdout, as Bazel prints them.
 */
export function buildPrinter(io: CliIO, options: PrinterOptions = DEFAULT_PRINTER_OPTIONS): BuildUi {
  return {
    event: (event) => void io.stderr.write(formatBuildEvent(event)),
    executionReporter(closing: ClosingOptions, flags): ExecutionReporter {
      const stream = io.stderr as { isTTY?: boolean; columns?: number };
      const sink = { write: (text: string) => void io.stderr.write(text) };
      const live = options.curses === 'yes' || (options.curses === 'auto' && stream.isTTY === true);
      if (live) return new TerminalReporter(sink, { ...flags, ...closing, ...(stream.columns ? { columns: stream.columns } : {}) });
      return new PlainReporter(sink, { ...flags, ...closing });
    },
    // As Bazel: the test summary's blocks, then the requested targets, then the elapsed time.
    closingLines: (report) =>
      (report.testOutcomes ? summaryBlocks(report.testOutcomes) : '') +
      targetLines(report, options) +
      `INFO: Elapsed time: ${((performance.now() - report.startedAt) / 1000).toFixed(3)}s\n`,
    testRunFinished(run: TestRunFinished) {
      if (run.failed && !run.timedOut) io.stderr.write(`FAIL: ${run.name} (see ${run.shownLog})\n`);
      if (run.printLog) {
        io.stderr.write(`INFO: From Testing ${run.name}:\n`);
        io.stdout.write(`==================== Test output for ${run.name}:\n${logBody(run.logPath)}${'='.repeat(80)}\n`);
      }
    },
    testOutput: (text) => void io.stdout.write(text),
  };
}
