import { ProtoWriter } from './proto-writer.js';

// Hand-written encoders of the REAPI messages a build encodes once or more per action: the input
// root's Directory messages, the Command and the Action (all three hashed into the action key), and
// the RequestMetadata header of every call. Each gives exactly the bytes of the generated codec
// (`reapi.X.encode`; pinned by test/core/reapi-encoders.test.ts): fields in number order, scalars
// left out at their default (empty string, 0, false), a present message written even when empty,
// every element of a repeated field written. They take only the fields Kiln sets; the input types
// have no others, so none can be dropped unnoticed.

export interface DigestFields {
  readonly hash: string;
  readonly sizeBytes: number;
}

export interface DirectoryFields {
  readonly files?: readonly { readonly name: string; readonly digest: DigestFields; readonly isExecutable?: boolean }[];
  readonly directories?: readonly { readonly name: string; readonly digest: DigestFields }[];
  readonly symlinks?: readonly { readonly name: string; readonly target: string }[];
}

export interface NameValue {
  readonly name: string;
  readonly value: string;
}

export interface PlatformFields {
  readonly properties?: readonly NameValue[];
}

export interface CommandFields {
  readonly arguments?: readonly string[];
  readonly environmentVariables?: readonly NameValue[];
  readonly outputFiles?: readonly string[];
  readonly outputDirectories?: readonly string[];
  readonly platform?: PlatformFields | undefined;
  readonly outputPaths?: readonly string[];
}

export interface ActionFields {
  readonly commandDigest?: DigestFields;
  readonly inputRootDigest?: DigestFields;
  readonly timeout?: { readonly seconds: number; readonly nanos: number } | undefined;
  readonly doNotCache?: boolean | undefined;
  readonly platform?: PlatformFields | undefined;
}

export interface RequestMetadataFields {
  readonly toolDetails?: { readonly toolName: string; readonly toolVersion: string };
  readonly actionId?: string;
  readonly toolInvocationId?: string;
  readonly correlatedInvocationsId?: string;
  readonly actionMnemonic?: string;
  readonly targetId?: string;
  readonly configurationId?: string;
}

const shared = new ProtoWriter();

/** Runs `write` on the shared writer and returns the bytes; a failed encode leaves the writer empty. */
function encoded(write: (w: ProtoWriter) => void): Buffer {
  try {
    write(shared);
    return shared.finish();
  } catch (e) {
    shared.reset();
    throw e;
  }
}

export function encodeDirectory(message: DirectoryFields): Buffer {
  return encoded((w) => {
    for (const f of message.files ?? []) {
      w.begin(1);
      str(w, 1, f.name);
      digest(w, 2, f.digest);
      if (f.isExecutable) w.uint(4, 1);
      w.end();
    }
    for (const d of message.directories ?? []) {
      w.begin(2);
      str(w, 1, d.name);
      digest(w, 2, d.digest);
      w.end();
    }
    for (const l of message.symlinks ?? []) {
      w.begin(3);
      str(w, 1, l.name);
      str(w, 2, l.target);
      w.end();
    }
  });
}

export function encodeCommand(message: CommandFields): Buffer {
  return encoded((w) => {
    for (const a of message.arguments ?? []) w.string(1, a);
    for (const e of message.environmentVariables ?? []) nameValue(w, 2, e);
    for (const p of message.outputFiles ?? []) w.string(3, p);
    for (const p of message.outputDirectories ?? []) w.string(4, p);
    if (message.platform) platform(w, 5, message.platform);
    for (const p of message.outputPaths ?? []) w.string(7, p);
  });
}

export function encodeAction(message: ActionFields): Buffer {
  return encoded((w) => {
    if (message.commandDigest) digest(w, 1, message.commandDigest);
    if (message.inputRootDigest) digest(w, 2, message.inputRootDigest);
    if (message.timeout) {
      w.begin(6);
      if (message.timeout.seconds !== 0) w.uint(1, message.timeout.seconds);
      if (message.timeout.nanos !== 0) w.uint(2, message.timeout.nanos);
      w.end();
    }
    if (message.doNotCache) w.uint(7, 1);
    if (message.platform) platform(w, 10, message.platform);
  });
}

export function encodeRequestMetadata(message: RequestMetadataFields): Buffer {
  return encoded((w) => {
    if (message.toolDetails) {
      w.begin(1);
      str(w, 1, message.toolDetails.toolName);
      str(w, 2, message.toolDetails.toolVersion);
      w.end();
    }
    str(w, 2, message.actionId);
    str(w, 3, message.toolInvocationId);
    str(w, 4, message.correlatedInvocationsId);
    str(w, 5, message.actionMnemonic);
    str(w, 6, message.targetId);
    str(w, 7, message.configurationId);
  });
}

/** A singular string field: left out when empty, as proto3 does. */
function str(w: ProtoWriter, field: number, value: string | undefined): void {
  if (value) w.string(field, value);
}

function digest(w: ProtoWriter, field: number, d: DigestFields): void {
  w.begin(field);
  str(w, 1, d.hash);
  if (d.sizeBytes !== 0) w.uint(2, d.sizeBytes);
  w.end();
}

function nameValue(w: ProtoWriter, field: number, p: NameValue): void {
  w.begin(field);
  str(w, 1, p.name);
  str(w, 2, p.value);
  w.end();
}

function platform(w: ProtoWriter, field: number, p: PlatformFields): void {
  w.begin(field);
  for (const property of p.properties ?? []) nameValue(w, 1, property);
  w.end();
}
