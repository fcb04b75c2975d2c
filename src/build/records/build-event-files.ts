import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { buildEventStream, delimitedRecord, protoText, UsageError } from '../../core/index.js';
import type { BuildEventTransport } from './build-event-stream.js';

type BuildEventInit = buildEventStream.BuildEventInit;

/** How each of Bazel's `--build_event_*_file` flags lays an event out. */
export type BuildEventFileFormat = 'json' | 'binary' | 'text';

/**
 * One `--build_event_json_file`, `--build_event_binary_file` or `--build_event_text_file`, written
 * as the events come (a reader may follow the file while the build runs), as Bazel's file
 * transports lay them out: JSON one compact proto3-JSON object per line (JsonFormat with
 * insignificant whitespace omitted), binary varint-delimited BuildEvent messages, text each event
 * in protobuf text format inside `event { ... }`.
 */
export class BuildEventFile implements BuildEventTransport {
  private fd: number | undefined;

  /** Throws UsageError naming the flag when the file cannot be created. */
  constructor(
    readonly path: string,
    private readonly format: BuildEventFileFormat,
  ) {
    try {
      mkdirSync(dirname(path), { recursive: true });
      this.fd = openSync(path, 'w');
    } catch (e) {
      throw new UsageError(`--build_event_${format}_file=${path}: ${(e as Error).message}`);
    }
  }

  write(event: BuildEventInit): void {
    if (this.fd === undefined) return;
    const bytes = encodeBuildEvent(event, this.format);
    writeSync(this.fd, typeof bytes === 'string' ? Buffer.from(bytes) : bytes);
  }

  async close(): Promise<void> {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }
}

/** One event as the file of `format` holds it. */
export function encodeBuildEvent(event: BuildEventInit, format: BuildEventFileFormat): Uint8Array | string {
  const codec = buildEventStream.BuildEvent;
  switch (format) {
    case 'binary':
      return delimitedRecord(codec.encode(event));
    case 'text':
      return `event {\n${protoText(codec, event)}}\n\n`;
    case 'json':
      return `${JSON.stringify(compactProtoJson(event))}\n`;
  }
}

/** proto3's JSON mapping as Bazel's JsonFormat prints it: int64 as strings, enums by name, defaults left out. */
function compactProtoJson(event: BuildEventInit): unknown {
  const type = buildEventStream.BuildEvent.type;
  return type.toObject(type.fromObject(event as Record<string, unknown>), { enums: String, longs: String, bytes: String, json: true });
}
