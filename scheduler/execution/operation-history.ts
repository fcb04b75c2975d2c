import { reapi, type Digest } from '../../src/core/index.js';
import type { PlatformProperty } from './platform-rules.js';

/** What a client said of an Execute call in its `requestmetadata-bin` header (REAPI RequestMetadata). */
export interface OperationMetadata {
  readonly toolName: string;
  readonly toolVersion: string;
  /** tool_invocation_id: Bazel's and Kiln's invocation id, the one their Build Event Protocol streams carry. */
  readonly invocationId: string;
  readonly correlatedInvocationsId: string;
  readonly actionId: string;
  readonly actionMnemonic: string;
  readonly targetId: string;
  readonly configurationId: string;
}

export const NO_METADATA: OperationMetadata = {
  toolName: '',
  toolVersion: '',
  invocationId: '',
  correlatedInvocationsId: '',
  actionId: '',
  actionMnemonic: '',
  targetId: '',
  configurationId: '',
};

/** RequestMetadata decoded from its header bytes; NO_METADATA when absent or unreadable. */
export function operationMetadataOf(raw: Buffer | undefined): OperationMetadata {
  if (!raw) return NO_METADATA;
  try {
    const m = reapi.RequestMetadata.decode(raw);
    return {
      toolName: m.toolDetails?.toolName ?? '',
      toolVersion: m.toolDetails?.toolVersion ?? '',
      invocationId: m.toolInvocationId,
      correlatedInvocationsId: m.correlatedInvocationsId,
      actionId: m.actionId,
      actionMnemonic: m.actionMnemonic,
      targetId: m.targetId,
      configurationId: m.configurationId,
    };
  } catch {
    return NO_METADATA;
  }
}

/** One Execute call as the web UI shows it; the scheduler fills it in as the operation moves on. */
export interface RecordedOperation {
  readonly name: string;
  readonly instanceName: string;
  readonly actionDigest: Digest;
  readonly metadata: OperationMetadata;
  stage: 'CACHE_CHECK' | 'QUEUED' | 'EXECUTING' | 'COMPLETED';
  readonly createdMs: number;
  queuedMs?: number;
  startedMs?: number;
  completedMs?: number;
  /** The executor that ran it (its display name), once assigned. */
  worker?: string;
  platform?: readonly PlatformProperty[];
  /** Answered from the action cache. */
  cachedResult: boolean;
  /** The final status (OK or why it failed). */
  status?: { readonly code: number; readonly message: string };
  result?: reapi.ActionResult;
}

/**
 * The most recent operations, bounded (`capacity`; the oldest is dropped first), with the request
 * metadata their clients sent: what the web UI's operation, action and invocation pages read. The
 * scheduler's own records are forgotten once finished operations expire; these stay until pushed out.
 */
export class OperationHistory {
  private readonly byName = new Map<string, RecordedOperation>();

  constructor(readonly capacity: number) {}

  add(operation: RecordedOperation): void {
    if (this.capacity === 0) return;
    this.byName.set(operation.name, operation);
    while (this.byName.size > this.capacity) this.byName.delete(this.byName.keys().next().value as string);
  }

  get(name: string): RecordedOperation | undefined {
    return this.byName.get(name);
  }

  /** Newest first, those `keep` accepts, at most `limit`. */
  newestFirst(keep: (operation: RecordedOperation) => boolean = () => true, limit = Number.POSITIVE_INFINITY): RecordedOperation[] {
    const out: RecordedOperation[] = [];
    const all = [...this.byName.values()];
    for (let i = all.length - 1; i >= 0 && out.length < limit; i--) if (keep(all[i]!)) out.push(all[i]!);
    return out;
  }
}
