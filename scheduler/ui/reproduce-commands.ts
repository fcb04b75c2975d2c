import type { reapi } from '../../src/core/index.js';
import type { OperationMetadata } from '../execution/index.js';
import { shellQuote } from './format.js';

/** A command line to show, and what it does. */
export interface ReproduceCommand {
  readonly what: string;
  readonly line: string;
}

/**
 * How to run an action again away from the page. With the target the client named (RequestMetadata
 * target_id: Bazel and Kiln send the label), from the user's workspace: on the cluster without its
 * cached result, and locally in the sandbox with the cluster as cache (after a clean, so the local
 * action cache does not answer); Kiln and Bazel take the same flags. Always: the command itself, for a
 * directory that holds the input root.
 */
export function reproduceCommands(endpoint: string, instanceName: string, command: reapi.Command, metadata: OperationMetadata | undefined): ReproduceCommand[] {
  const out: ReproduceCommand[] = [];
  const instance = instanceName === '' ? '' : ` --remote_instance_name=${shellQuote(instanceName)}`;
  const target = metadata?.targetId ?? '';
  if (target !== '') {
    const t = shellQuote(target);
    for (const tool of ['kiln', 'bazel']) {
      out.push({
        what: `${tool}: on the cluster again, not from its cache`,
        line: `${tool} build --remote_executor=${endpoint}${instance} --noremote_accept_cached ${t}`,
      });
      out.push({
        what: `${tool}: locally, in the sandbox (the cluster as cache for everything else)`,
        line: `${tool} clean && ${tool} build --remote_cache=${endpoint}${instance} --noremote_accept_cached --spawn_strategy=sandboxed ${t}`,
      });
    }
  }
  const env = command.environmentVariables.map((v) => `${v.name}=${shellQuote(v.value)}`);
  const cd = command.workingDirectory === '' ? '' : `cd ${shellQuote(command.workingDirectory)} && `;
  out.push({
    what: 'the command alone, in a directory holding the input root (download its files from the input root page)',
    line: `${cd}env -i ${[...env, ...command.arguments.map(shellQuote)].join(' ')}`,
  });
  return out;
}
