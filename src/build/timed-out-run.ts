import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Action } from '../actions/index.js';
import type { ProcessEnd } from '../exec/index.js';
import type { RunResult } from './test-results.js';

/** An empty zip archive (only its end-of-central-directory record), as the setup script writes it. */
const EMPTY_ZIP = Buffer.from([0x50, 0x4b, 0x05, 0x06, ...new Array<number>(18).fill(0)]);

/**
 * Completes the result files of a test run killed at its timeout before its setup script could
 * write them (a remote server's timeout ends the whole action), as Bazel's test strategy does
 * after a killed spawn: the log the server returned is kept (an empty one made when there is
 * none), `test.status` says timed out, `test.xml` is generated from the log when the test left
 * none, and `test.outputs/outputs.zip` is an empty archive when missing.
 */
export function completeTimedOutRun(execRoot: string, logDir: string, action: Action, process: ProcessEnd): RunResult {
  const dir = join(execRoot, logDir);
  mkdirSync(join(dir, 'test.outputs'), { recursive: true });
  const log = join(dir, 'test.log');
  if (!existsSync(log)) writeFileSync(log, '');
  const durationMs = Math.round(process.wallTimeMs);
  writeFileSync(join(dir, 'test.status'), `exit_code=${process.exitCode}\ntimed_out=1\nduration_ms=${durationMs}\n`);
  const xml = join(dir, 'test.xml');
  if (!existsSync(xml)) writeFileSync(xml, timeoutXml(action, process.exitCode, durationMs, readFileSync(log, 'utf8')));
  const zip = join(dir, 'test.outputs', 'outputs.zip');
  if (!existsSync(zip)) writeFileSync(zip, EMPTY_ZIP);
  return { status: 'TIMEOUT', durationMs, exitCode: process.exitCode };
}

/** The XML the setup script generates for a test that left none, for a run that ended with `exitCode`. */
function timeoutXml(action: Action, exitCode: number, durationMs: number, log: string): string {
  let name = (action.env['TEST_BINARY'] ?? action.owner).replace(/^\.\//, '');
  const shards = action.env['TEST_TOTAL_SHARDS'];
  if (shards) name += `_shard_${Number(action.env['TEST_SHARD_INDEX']) + 1}/${shards}`;
  const seconds = Math.floor(durationMs / 1000);
  // XML 1.0 cannot carry most control characters, and a CDATA section cannot contain its own end.
  const text = log.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '').replaceAll(']]>', ']]>]]<![CDATA[>');
  const attr = (s: string) => s.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n' +
    `<testsuite name="${attr(name)}" tests="1" failures="0" errors="1">\n` +
    `  <testcase name="${attr(name)}" status="run" duration="${seconds}" time="${seconds}"><error message="exited with error code ${exitCode}"></error></testcase>\n` +
    `  <system-out><![CDATA[${text}]]></system-out>\n</testsuite>\n</testsuites>\n`
  );
}
