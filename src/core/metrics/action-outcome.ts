import { googleRpc, type reapi } from '../proto.js';

type Stamp = { seconds?: number | null | undefined; nanos?: number | null | undefined } | null | undefined;

function secondsOf(t: Stamp): number | undefined {
  return t ? (t.seconds ?? 0) + (t.nanos ?? 0) / 1e9 : undefined;
}

/** The `outcome` label of an ExecuteResponse: success, failure (non-zero exit), cancelled, timeout or error. */
export function outcomeOf(response: reapi.ExecuteResponseInit): 'success' | 'failure' | 'cancelled' | 'timeout' | 'error' {
  const code = response.status?.code ?? googleRpc.Code.OK;
  if (code === googleRpc.Code.CANCELLED) return 'cancelled';
  if (code === googleRpc.Code.DEADLINE_EXCEEDED) return 'timeout';
  if (code !== googleRpc.Code.OK) return 'error';
  return (response.result?.exitCode ?? 0) === 0 ? 'success' : 'failure';
}

/** The worker-side stages of an executed action (input_fetch, execution, output_upload) in seconds, from its ExecutedActionMetadata. */
export function actionStageSeconds(response: reapi.ExecuteResponseInit): [string, number][] {
  const m = response.result?.executionMetadata;
  if (!m) return [];
  const out: [string, number][] = [];
  const stage = (name: string, start: Stamp, end: Stamp) => {
    const a = secondsOf(start);
    const b = secondsOf(end);
    if (a !== undefined && b !== undefined && b >= a) out.push([name, b - a]);
  };
  stage('input_fetch', m.inputFetchStartTimestamp, m.inputFetchCompletedTimestamp);
  stage('execution', m.executionStartTimestamp, m.executionCompletedTimestamp);
  stage('output_upload', m.outputUploadStartTimestamp, m.outputUploadCompletedTimestamp);
  return out;
}
