import { InvalidArgumentError, type Digest } from '../../src/core/index.js';
import { NO_METADATA, validateAction } from '../execution/index.js';
import type { UiCaller } from './ui-caller.js';
import { notFound, readableInstance, type UiContext } from './ui-context.js';

/**
 * Runs an action on the cluster again, skipping the action cache (an admin's rerun from the action
 * page): validated and queued as an Execute call would be, so the result is trusted and cached as
 * any executor's. Nobody streams the operation, so it is never abandoned; its page follows it.
 * @returns the new operation's name
 * @throws NotFoundError unless the caller may administer the instance (the same answer as a missing action)
 */
export async function rerunAction(ui: UiContext, caller: UiCaller, instanceName: string, digest: Digest): Promise<string> {
  const scheduler = ui.scheduler;
  if (!scheduler) throw new InvalidArgumentError('this server runs no scheduler: nothing can run the action');
  if (!caller.mayAdminister(instanceName)) throw notFound('the action');
  const instance = readableInstance(ui, caller, instanceName, 'the action');
  const validated = await validateAction(instance.cas, digest, scheduler.config);
  scheduler.checkQueueRoom(instanceName, validated, validated.action.doNotCache);
  const metadata = { ...NO_METADATA, toolName: 'kiln web UI', toolVersion: 'rerun', correlatedInvocationsId: caller.principals.join(',') };
  const op = scheduler.begin(instanceName, digest, metadata);
  scheduler.submit(op.name, { instanceName, validated, priority: 0, invocationId: '', doNotCache: validated.action.doNotCache });
  return op.name;
}
