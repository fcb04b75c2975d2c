import { ExitCode } from '../core/index.js';
import type { CliIO } from './io.js';

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Bazel's `Build time:` form (Java's `EEE MMM d HH:mm:ss yyyy`, UTC), then the seconds. */
export function buildTimeText(seconds: number): string {
  const d = new Date(seconds * 1000);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} ${d.getUTCFullYear()} (${seconds})`;
}

/**
 * `kiln version` in Bazel's format (VersionCommand): the build label (Kiln's version), target and
 * time. Kiln's builds are not stamped, so the time is the epoch, as Bazel prints for an unstamped
 * binary. `--gnu_format` prints `kiln <version>` as GNU tools do.
 */
export function versionCommand(args: readonly string[], io: CliIO, version: string): number {
  let gnu = false;
  for (const a of args) {
    if (a === '--gnu_format' || a === '--gnu_format=true' || a === '--gnu_format=yes' || a === '--gnu_format=1') gnu = true;
    else if (a === '--nognu_format' || a === '--gnu_format=false' || a === '--gnu_format=no' || a === '--gnu_format=0') gnu = false;
    else if (a.startsWith('--output_base') || a.startsWith('--bazelrc') || /^--(no)?(system|workspace|home)_rc$/.test(a) || a === '--ignore_all_rc_files')
      continue;
    else {
      io.stderr.write(a.startsWith('-') ? `ERROR: Unrecognized option: ${a}\n` : `ERROR: The version command does not take arguments; got '${a}'\n`);
      return ExitCode.COMMAND_LINE_ERROR;
    }
  }
  if (gnu) {
    io.stdout.write(`kiln ${version}\n`);
    return ExitCode.SUCCESS;
  }
  const stamp = 0;
  io.stdout.write(
    `Build label: ${version}\nBuild target: bin/kiln.js\nBuild time: ${buildTimeText(stamp)}\nBuild timestamp: ${stamp}\nBuild timestamp as int: ${stamp}\n`,
  );
  return ExitCode.SUCCESS;
}
