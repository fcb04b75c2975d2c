// REAPI v2 client: CAS upload/download, Execute + WaitExecution, ActionCache (README.md).
export { RemoteClient, type RemoteOptions, type RemoteCapabilities } from './remote-client.js';
export { parseRemoteEndpoint, type RemoteEndpoint } from './remote-endpoint.js';
export type { TlsFiles } from './remote-tls.js';
export { RemoteCallError, isRemoteCallError, remoteCallError } from './remote-call-error.js';
export { Retrier, DEFAULT_BACKOFF, isRetryable, type BackoffPolicy } from './retrier.js';
export { requestMetadata, parseRemoteHeader, REQUEST_METADATA_KEY, type InvocationIdentity, type ActionIdentity } from './request-metadata.js';
export type { BlobSource, CasLimits } from './remote-cas.js';
export type { ExecuteOptions, ExecutionOutcome } from './remote-execution.js';
export { downloadOutputs, resultFieldsOf, writeProducedOutputs, type BlobReader } from './output-download.js';
export { resultOutputs, OutputDownloadError, isCleanRelativePath, type DeclaredOutputKinds, type ResultOutputOptions } from './result-outputs.js';
export { writeVerifiedChunks, BlobContentError } from './blob-to-file.js';
export { actionBlobs, blobsNamed } from './action-blobs.js';
export {
  EndpointCredentials,
  helperForHost,
  parseCredentialHelperFlag,
  parseDurationFlag,
  runCredentialHelper,
  type CredentialHelperSpec,
  type CredentialHelperOptions,
} from './credential-helper.js';
export { RemoteBlobAccess, type RemoteBlobAccessOptions } from './remote-blob-access.js';
export { RemoteStorage } from './remote-storage.js';
export { BuildEventServiceClient } from './build-event-service-client.js';
