import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/core/index.js';
import { parseSchedulerRoleConfig, parseStorageRoleConfig } from '../../scheduler/index.js';
import { readExecutorConfigFile } from '../../executor/index.js';
import { parseClusterUpConfig } from '../../src/cli/cluster-up-config.js';

const DEPLOY = join(import.meta.dirname, '../../deploy');

/** The real parser of each role, chosen by the file's base name (`scheduler*.json`, ...). */
const PARSERS: Record<string, (json: unknown, baseDir: string) => unknown> = {
  scheduler: (json, baseDir) => parseSchedulerRoleConfig(json, baseDir),
  storage: (json, baseDir) => parseStorageRoleConfig(json, baseDir),
  executor: (json) => readExecutorConfigFile(json),
  cluster: (json, baseDir) => parseClusterUpConfig(json, baseDir),
};

function jsonFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.json'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

const samples = jsonFilesUnder(DEPLOY)
  .map((file) => ({ file, role: Object.keys(PARSERS).find((role) => basename(file).startsWith(role)) }))
  .filter((s): s is { file: string; role: string } => s.role !== undefined);

describe('every sample config under deploy/', () => {
  it('includes a sample of each role given so far', () => {
    expect(new Set(samples.map((s) => s.role))).toEqual(new Set(['scheduler', 'storage', 'executor']));
  });

  it.each(samples.map((s) => [relative(DEPLOY, s.file), s] as const))('%s loads through its role parser', (_name, { file, role }) => {
    expect(() => parseConfigText(readFileSync(file, 'utf8'), relative(DEPLOY, file), (json) => PARSERS[role]!(json, dirname(file)))).not.toThrow();
  });
});
