import type { Action, Artifact } from '../../actions/index.js';
import { depsetOf } from '../../loading/index.js';
import { None, StarDict, StarList, StarObject, type Value } from '../../starlark/index.js';
import type { FileEntry } from '../configured/configured-target.js';
import { fileValueOf } from './file-value.js';

/**
 * Bazel's `Action` as analysis tests read it (`target.actions`): mnemonic, argv, inputs and outputs
 * (depsets of Files), env, and for file writes their `content`, for templates their
 * `substitutions` (None otherwise, as in Bazel).
 */
export class ActionValue extends StarObject {
  private readonly members = new Map<string, Value>();

  constructor(readonly action: Action) {
    super();
  }
  get type(): string {
    return 'Action';
  }
  override attr(name: string): Value | undefined {
    let v = this.members.get(name);
    if (v === undefined) {
      v = this.member(name);
      if (v !== undefined) this.members.set(name, v);
    }
    return v;
  }
  private member(name: string): Value | undefined {
    const a = this.action;
    switch (name) {
      case 'mnemonic':
        return a.mnemonic;
      case 'argv':
        return a.inProcess ? None : frozen(new StarList([...a.argv]));
      case 'args':
        return None;
      case 'inputs':
        return depsetOf(a.inputs.map((i) => fileValueOf(entryOf(i))));
      case 'outputs':
        return depsetOf(a.outputs.map((o) => fileValueOf(entryOf(o))));
      case 'env': {
        const d = new StarDict();
        for (const [k, v] of Object.entries(a.env)) d.set(k, v);
        d.freeze();
        return d;
      }
      case 'content':
        return a.inProcess?.kind === 'write' ? a.inProcess.content : None;
      case 'substitutions': {
        if (a.inProcess?.kind !== 'expand_template') return None;
        const d = new StarDict();
        for (const [k, v] of a.inProcess.substitutions) d.set(k, v);
        d.freeze();
        return d;
      }
      default:
        return undefined;
    }
  }
  override attrNames(): string[] {
    return ['args', 'argv', 'content', 'env', 'inputs', 'mnemonic', 'outputs', 'substitutions'];
  }
  repr(): string {
    return `<action ${this.action.mnemonic} ${this.action.outputs[0]?.execPath ?? ''}>`;
  }
}

function frozen(list: StarList): StarList {
  list.frozen = true;
  return list;
}

/** A File for an action's artifact: a derived one's short path is its path under its root. */
function entryOf(artifact: Artifact): FileEntry {
  const rootPath =
    artifact.kind === 'derived' && artifact.execPath.startsWith(`${artifact.root}/`) ? artifact.execPath.slice(artifact.root.length + 1) : artifact.execPath;
  return { artifact, rootPath };
}
