import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { computeActionKey, localActionKey, inputFilesOf, type Action, type InputEntry } from '../../src/actions/index.js';

/**
 * The local action cache and the disk/remote caches must agree on what "the same action" is: the
 * local key is a cheap encoding of exactly what the REAPI Action digest covers. Generated actions
 * check both directions: equal descriptions (written in any order) give equal keys under both, and
 * a change to any covered part changes both.
 */

interface Description {
  readonly argv: string[];
  readonly env: [string, string][];
  readonly outputs: string[];
  /** The output first in sorted order is a directory (tree artifact). */
  readonly treeOutput: boolean;
  readonly inputs: InputEntry[];
  /** The target of a symlink among the inputs (`links/l`), or none. */
  readonly link: string | null;
  readonly noCache: boolean;
  readonly platform: [string, string][];
  /** 0: none. */
  readonly timeoutSeconds: number;
}

const word = fc.string({ unit: 'binary', minLength: 1, maxLength: 6 }).filter((s) => !s.includes('/') && s !== '.' && s !== '..');
const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/);
const input = fc.record({
  dir: fc.constantFrom('', 'pkg/', 'pkg/sub/', 'other/'),
  name: word,
  hash: hex64,
  sizeBytes: fc.integer({ min: 0, max: 1 << 20 }),
  isExecutable: fc.boolean(),
});

const description: fc.Arbitrary<Description> = fc.record({
  argv: fc.array(fc.string({ unit: 'binary', maxLength: 8 }), { minLength: 1, maxLength: 4 }),
  env: fc.uniqueArray(fc.tuple(word, fc.string({ maxLength: 6 })), { selector: ([name]) => name, maxLength: 4 }),
  outputs: fc.uniqueArray(
    word.map((w) => `bazel-out/k8-fastbuild/bin/out/${w}`),
    { minLength: 1, maxLength: 3 },
  ),
  // Inputs live under directories no input name can also be (a file and a directory at one path is invalid).
  inputs: fc
    .uniqueArray(input, { selector: (i) => `${i.dir}${i.name}`, maxLength: 6 })
    .map((list) => list.map((i) => ({ path: `${i.dir}f-${i.name}`, digest: { hash: i.hash, sizeBytes: i.sizeBytes }, isExecutable: i.isExecutable }))),
  treeOutput: fc.boolean(),
  link: fc.option(word),
  noCache: fc.boolean(),
  platform: fc.uniqueArray(fc.tuple(word, word), { selector: ([name]) => name, maxLength: 2 }),
  timeoutSeconds: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3600 })),
});

function actionOf(d: Description): Action {
  return {
    owner: '//out:gen',
    mnemonic: 'Genrule',
    progressMessage: 'Executing genrule //out:gen',
    argv: d.argv,
    env: {},
    inputs: [],
    outputs: d.outputs.map((execPath) => ({
      kind: 'derived',
      execPath,
      root: 'bazel-out/k8-fastbuild/bin',
      owner: '//out:gen',
      ...(d.treeOutput && execPath === [...d.outputs].sort()[0] ? { type: 'directory' as const } : {}),
    })),
    executionRequirements: d.noCache ? ['no-cache'] : [],
    executableOutputs: false,
    ...(d.timeoutSeconds > 0 ? { timeoutSeconds: d.timeoutSeconds } : {}),
  };
}

function entriesOf(d: Description): InputEntry[] {
  return d.link === null ? d.inputs : [...d.inputs, { kind: 'symlink', path: 'links/l', target: d.link }];
}

function keys(d: Description): { local: string; reapi: string } {
  const env = Object.fromEntries(d.env);
  const platform = Object.fromEntries(d.platform);
  return {
    local: localActionKey(actionOf(d), env, entriesOf(d), platform),
    reapi: computeActionKey(actionOf(d), { env, inputs: entriesOf(d), platform }).digest.hash,
  };
}

/** The same description with every unordered part written in another order. */
function reordered(d: Description): Description {
  return { ...d, env: [...d.env].reverse(), outputs: [...d.outputs].reverse(), inputs: [...d.inputs].reverse(), platform: [...d.platform].reverse() };
}

/** The generated inputs are files, first (mutations add the other kinds). */
const files = (d: Description) => inputFilesOf(d.inputs);

/** One change to one covered part; `pick` chooses which. */
const mutation = fc.tuple(description, fc.nat(), fc.string({ unit: 'binary', minLength: 1, maxLength: 4 })).chain(([d, pick, extra]) => {
  const changes: (() => Description | undefined)[] = [
    () => ({ ...d, argv: [...d.argv, extra] }),
    () => ({ ...d, argv: [d.argv[0] + extra, ...d.argv.slice(1)] }),
    // Names longer than any generated one, so an addition never collides with what is there.
    () => ({ ...d, env: [...d.env, [`ADDED_${extra}`, 'v']] }),
    () => (d.env.length > 0 ? { ...d, env: [[d.env[0]![0], d.env[0]![1] + extra], ...d.env.slice(1)] } : undefined),
    () => (d.env.length > 0 ? { ...d, env: d.env.slice(1) } : undefined),
    () => ({ ...d, outputs: [...d.outputs, `bazel-out/k8-fastbuild/bin/out/added-${extra}`] }),
    () => ({ ...d, inputs: [...d.inputs, { path: `new/x${extra}`, digest: { hash: '0'.repeat(64), sizeBytes: 0 }, isExecutable: false }] }),
    () => (d.inputs.length > 0 ? { ...d, inputs: d.inputs.slice(1) } : undefined),
    // Tree artifacts and symlinks: an output's kind, a symlink or an (empty) directory in the input root, a link's target.
    () => ({ ...d, treeOutput: !d.treeOutput }),
    () => ({ ...d, inputs: [...d.inputs, { kind: 'symlink', path: `links/l${extra}`, target: 'x' }] }),
    () => ({ ...d, inputs: [...d.inputs, { kind: 'directory', path: `trees/t${extra}` }] }),
    () => (files(d).length > 0 ? { ...d, inputs: [{ ...files(d)[0]!, isExecutable: !files(d)[0]!.isExecutable }, ...d.inputs.slice(1)] } : undefined),
    () =>
      files(d).length > 0
        ? { ...d, inputs: [{ ...files(d)[0]!, digest: { ...files(d)[0]!.digest, sizeBytes: files(d)[0]!.digest.sizeBytes + 1 } }, ...d.inputs.slice(1)] }
        : undefined,
    () => {
      if (files(d).length === 0) return undefined;
      const first = files(d)[0]!;
      const hash = (first.digest.hash[0] === 'a' ? 'b' : 'a') + first.digest.hash.slice(1);
      return { ...d, inputs: [{ ...first, digest: { ...first.digest, hash } }, ...d.inputs.slice(1)] };
    },
    () => {
      if (d.inputs.length === 0) return undefined;
      const first = d.inputs[0]!;
      return { ...d, inputs: [{ ...first, path: `moved/${first.path}` }, ...d.inputs.slice(1)] };
    },
    () => ({ ...d, noCache: !d.noCache }),
    () => ({ ...d, platform: [...d.platform, [`added-${extra}`, 'v']] }),
    () => (d.platform.length > 0 ? { ...d, platform: [[d.platform[0]![0], d.platform[0]![1] + extra], ...d.platform.slice(1)] } : undefined),
    () => (d.link !== null ? { ...d, link: d.link + extra } : undefined),
    () => ({ ...d, timeoutSeconds: d.timeoutSeconds + extra.length }),
    () => (d.timeoutSeconds > 0 ? { ...d, timeoutSeconds: 0 } : undefined),
  ];
  const changed = changes[pick % changes.length]!() ?? changes[0]!()!;
  return fc.constant([d, changed] as const);
});

describe('the local action key and the REAPI action key', () => {
  it('are equal for equal actions, whatever order the unordered parts come in', () => {
    fc.assert(
      fc.property(description, (d) => {
        const a = keys(d);
        const b = keys(reordered(d));
        expect(b.local).toBe(a.local);
        expect(b.reapi).toBe(a.reapi);
      }),
      { numRuns: 300 },
    );
  });

  it('both change whenever any covered part changes: argv, env, outputs and their kinds, input paths, digests, executable bits, symlinks and directories, no-cache, platform, timeout', () => {
    fc.assert(
      fc.property(mutation, ([before, after]) => {
        const a = keys(before);
        const b = keys(after);
        expect(b.local).not.toBe(a.local);
        expect(b.reapi).not.toBe(a.reapi);
      }),
      { numRuns: 1000 },
    );
  });

  it('agree on equality for any two actions', () => {
    fc.assert(
      fc.property(description, description, (x, y) => {
        const a = keys(x);
        const b = keys(y);
        expect(a.local === b.local).toBe(a.reapi === b.reapi);
      }),
      { numRuns: 300 },
    );
  });

  it('ignore what neither covers: owner, mnemonic, progress message', () => {
    fc.assert(
      fc.property(description, (d) => {
        const env = Object.fromEntries(d.env);
        const platform = Object.fromEntries(d.platform);
        const other: Action = { ...actionOf(d), owner: '//else:where', mnemonic: 'Other', progressMessage: 'elsewhere' };
        expect(localActionKey(other, env, entriesOf(d), platform)).toBe(keys(d).local);
        expect(computeActionKey(other, { env, inputs: entriesOf(d), platform }).digest.hash).toBe(keys(d).reapi);
      }),
      { numRuns: 100 },
    );
  });
});
