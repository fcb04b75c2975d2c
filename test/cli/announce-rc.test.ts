import { cpSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/index.js';
import { needTool } from '../setup/need-tool.js';

/**
 * Differential test: the same rc files (announce-rc/workspace: a startup line, common, build and
 * test lines, nested configs defined in two files, an import and a try-import of a missing file,
 * --enable_platform_specific_config) give the same `--announce_rc` lines — so the same options, from
 * the same files, in the same order — as Bazel 4.2.3 recorded by announce-rc/record.sh. Lines only
 * Bazel prints (its client's `--isatty` options) and Kiln's own (server options having no effect)
 * are outside the comparison.
 */
const HERE = join(import.meta.dirname, 'announce-rc');
const RECORDED = readFileSync(join(HERE, 'bazel-4.2.3.txt'), 'utf8');

function recorded(command: string): string {
  const section = RECORDED.split(/^### /m).find((s) => s.startsWith(`${command} `));
  if (!section) throw new Error(`no recording for ${command}`);
  return section.slice(section.indexOf('\n') + 1);
}

/** The lines record.sh keeps: rc notes and their indented continuation lines. */
function announceLines(stderr: string): string {
  const out: string[] = [];
  let keep = false;
  for (const line of stderr.split('\n')) {
    if (/^INFO: (Reading rc options|Reading 'startup' options|Found applicable config)/.test(line)) {
      keep = true;
      out.push(line);
    } else if (keep && line.startsWith('  ')) out.push(line);
    else keep = false;
  }
  return out.map((l) => `${l}\n`).join('');
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('--announce_rc against Bazel 4.2.3', () => {
  // The recording enables build:linux through --enable_platform_specific_config.
  if (!needTool('a Linux host', process.platform === 'linux', 'run on Linux', { optional: 'the recording is of build:linux' })) return;

  it.each(['build', 'test'])('%s --announce_rc --config=ci prints the lines Bazel 4.2.3 prints', async (command) => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'kiln-announce-')));
    dirs.push(dir);
    cpSync(join(HERE, 'workspace'), join(dir, 'ws'), { recursive: true });
    cpSync(join(HERE, 'user.rc'), join(dir, 'user.rc'));
    let stderr = '';
    const code = await runCli(
      ['--nosystem_rc', '--nohome_rc', `--bazelrc=${dir}/user.rc`, command, '--nobuild', '--announce_rc', '--config=ci', '//pkg:a'],
      {
        stdout: { write: () => true },
        stderr: { write: (c) => (stderr += String(c)) },
        cwd: join(dir, 'ws'),
        env: { HOME: join(dir, 'home'), XDG_CACHE_HOME: join(dir, 'cache'), PATH: process.env.PATH },
      },
      'test',
    );
    expect(code, stderr).toBe(0);
    const kiln = announceLines(stderr).replaceAll(join(dir, 'ws'), '<WORKSPACE>').replaceAll(dir, '<DIR>');
    expect(kiln).toBe(recorded(command));
  });
});
