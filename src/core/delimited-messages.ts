/**
 * Varint-delimited messages, as protobuf's writeDelimitedTo lays them out (Bazel's
 * `--build_event_binary_file`, the Build Event Service's files): each message after its length.
 */

/** One message with its length in front. */
export function delimitedRecord(message: Uint8Array): Buffer {
  const out: number[] = [];
  let n = message.length;
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return Buffer.concat([Buffer.from(out), message]);
}

/** The complete messages of a delimited stream; a last one cut short (a crash mid-append) is left out. */
export function delimitedMessages(bytes: Uint8Array): Buffer[] {
  const out: Buffer[] = [];
  let pos = 0;
  while (pos < bytes.length) {
    let length = 0;
    let shift = 0;
    let at = pos;
    for (;;) {
      if (at >= bytes.length || shift > 35) return out;
      const b = bytes[at++]!;
      length += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (b < 0x80) break;
    }
    if (at + length > bytes.length) return out;
    out.push(Buffer.from(bytes.subarray(at, at + length)));
    pos = at + length;
  }
  return out;
}
