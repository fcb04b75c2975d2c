import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Action } from '../../src/actions/index.js';
import { readRunResult } from '../../src/build/index.js';
import { completeTimedOutRun } from '../../src/build/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const logDir = 'bazel-out/k8-fastbuild/testlogs/pkg/slow/shard_2_of_3';
const action = {
  owner: '//pkg:slow',
  env: { TEST_BINARY: './pkg/slow', TEST_TOTAL_SHARDS: '3', TEST_SHARD_INDEX: '1' },
} as unknown as Action;

describe('completing the files of a test run killed at its timeout', () => {
  it('keeps the log the server returned and writes a TIMEOUT status, an XML from the log and an empty outputs archive', () => {
    const execRoot = mkdtempSync(join(tmpdir(), 'kiln-timed-out-'));
    dirs.push(execRoot);
    mkdirSync(join(execRoot, logDir), { recursive: true });
    writeFileSync(join(execRoot, logDir, 'test.log'), 'about to hang\u0001 ]]> still\n');
    const result = completeTimedOutRun(execRoot, logDir, action, { exitCode: 137, timedOut: true, wallTimeMs: 2012.6 });
    expect(result).toEqual({ status: 'TIMEOUT', durationMs: 2013, exitCode: 137 });
    expect(readRunResult(execRoot, logDir)).toEqual(result);
    expect(readFileSync(join(execRoot, logDir, 'test.log'), 'utf8')).toBe('about to hang\u0001 ]]> still\n');
    const xml = readFileSync(join(execRoot, logDir, 'test.xml'), 'utf8');
    expect(xml).toContain('<testsuite name="pkg/slow_shard_2/3" tests="1" failures="0" errors="1">');
    expect(xml).toContain('<error message="exited with error code 137"></error>');
    expect(xml).toContain('duration="2" time="2"');
    // Control characters dropped, the CDATA terminator split, as the setup script does.
    expect(xml).toContain('<![CDATA[about to hang ]]>]]<![CDATA[> still\n]]>');
    expect([...readFileSync(join(execRoot, logDir, 'test.outputs/outputs.zip')).subarray(0, 4)]).toEqual([0x50, 0x4b, 0x05, 0x06]);
  });

  it('makes an empty log when the server returned none, and keeps an XML the test wrote', () => {
    const execRoot = mkdtempSync(join(tmpdir(), 'kiln-timed-out-'));
    dirs.push(execRoot);
    mkdirSync(join(execRoot, logDir), { recursive: true });
    writeFileSync(join(execRoot, logDir, 'test.xml'), '<testsuites/>\n');
    completeTimedOutRun(execRoot, logDir, action, { exitCode: 1, timedOut: true, wallTimeMs: 10 });
    expect(readFileSync(join(execRoot, logDir, 'test.log'), 'utf8')).toBe('');
    expect(readFileSync(join(execRoot, logDir, 'test.xml'), 'utf8')).toBe('<testsuites/>\n');
  });
});
