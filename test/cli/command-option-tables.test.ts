import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXECUTOR_CONFIG_KEYS } from '../../executor/index.js';
import { bazelFlags } from '../../src/core/index.js';
import { commandOptionGroups, ownCommandOptions } from '../../src/cli/command-option-groups.js';
import { COMMANDS } from '../../src/cli/command-table.js';
import { flagsAsProto } from '../../src/cli/flags-as-proto.js';

interface RecordedFlag {
  readonly name: string;
  readonly hasNegativeFlag: boolean;
  readonly abbreviation?: string;
  readonly allowsMultiple: boolean;
  readonly commands: readonly string[];
}
const BAZEL_423 = JSON.parse(readFileSync(new URL('./fixtures/bazel-4.2.3-flags-as-proto.json', import.meta.url), 'utf8')) as { flags: RecordedFlag[] };

async function kilnFlags(): Promise<Map<string, bazelFlags.FlagInfo>> {
  const collection = bazelFlags.FlagCollection.decode(Buffer.from(await flagsAsProto(), 'base64'));
  return new Map(collection.flagInfos.map((f) => [f.name, f]));
}

describe("every command's options come from one table", () => {
  it("every command with options has a table, and the executor's lists every key of its config", async () => {
    for (const command of [
      'build',
      'test',
      'run',
      'info',
      'clean',
      'query',
      'cquery',
      'aquery',
      'cluster',
      'scheduler',
      'executor',
      'storage',
      'starlark',
      'shutdown',
    ]) {
      expect(COMMANDS[command], command).toBeDefined();
      const names = (await commandOptionGroups(command)).flatMap((g) => [...g.definitions].map((d) => d.name));
      expect(names.length, command).toBeGreaterThan(0);
    }
    const executor = (await ownCommandOptions('executor'))!;
    for (const key of EXECUTOR_CONFIG_KEYS) expect(executor.registry.get(key), key).toBeDefined();
    expect(executor.help()).toContain('  --platform (a string; may be used multiple times)');
  });

  it('kiln help flags-as-proto lists them as Bazel 4.2.3 does for the flags both have', async () => {
    const flags = await kilnFlags();
    for (const recorded of BAZEL_423.flags) {
      const ours = flags.get(recorded.name);
      if (ours === undefined) continue; // A flag Kiln does not have (query's --output is checked below).
      expect({ name: ours.name, neg: ours.hasNegativeFlag, abbrev: ours.abbreviation || undefined, multiple: ours.allowsMultiple }, recorded.name).toEqual({
        name: recorded.name,
        neg: recorded.hasNegativeFlag,
        abbrev: recorded.abbreviation,
        multiple: recorded.allowsMultiple,
      });
      // Kiln's commands are a subset of Bazel's for each flag (Kiln has no coverage, fetch, ...), except its own server commands.
      const kilnOnly = new Set(['cluster', 'scheduler', 'executor', 'storage', 'starlark']);
      for (const command of ours.commands) if (!kilnOnly.has(command)) expect(recorded.commands, `${recorded.name} in ${command}`).toContain(command);
    }
    expect(flags.get('keep_going')!.commands).toEqual(expect.arrayContaining(['build', 'query', 'cquery', 'test']));
    expect(flags.get('output_base')!.commands).toEqual(['startup']);
    expect(flags.get('expunge')!.commands).toEqual(['clean']);
    expect(flags.get('output')!.commands).toEqual(expect.arrayContaining(['query', 'cquery', 'aquery']));
  });
});
