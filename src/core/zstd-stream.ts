import { createRequire } from 'node:module';
import { InvalidArgumentError } from './status-error.js';

// zstd-napi's low-level binding gives incremental (de)compression without stream objects, so a blob
// is transformed chunk by chunk as it passes and never held whole.
type StreamResult = [remaining: number, produced: number, consumed: number];
interface Binding {
  CCtx: new () => { compressStream2(dst: Uint8Array, src: Uint8Array, end: number): StreamResult; setParameter(p: number, v: number): void };
  DCtx: new () => { decompressStream(dst: Uint8Array, src: Uint8Array): StreamResult };
  CParameter: { compressionLevel: number };
  EndDirective: { continue: number; flush: number; end: number };
  cStreamOutSize(): number;
  dStreamOutSize(): number;
}
let loaded: Binding | undefined;

/** The native binding, loaded on first use: every command imports this module, few compress. */
function zstd(): Binding {
  return (loaded ??= createRequire(import.meta.url)('zstd-napi/binding') as Binding);
}

/** Compresses a stream of chunks into one zstd frame. */
export class ZstdCompressor {
  private readonly cctx = new (zstd().CCtx)();
  private readonly outSize = zstd().cStreamOutSize();

  constructor(level = 1) {
    this.cctx.setParameter(zstd().CParameter.compressionLevel, level);
  }

  /** Compressed bytes for `chunk` (possibly none yet: zstd buffers internally). */
  push(chunk: Uint8Array): Buffer[] {
    return this.run(chunk, zstd().EndDirective.continue);
  }

  /** Ends the frame and returns what is left. */
  finish(): Buffer[] {
    return this.run(new Uint8Array(0), zstd().EndDirective.end);
  }

  private run(input: Uint8Array, directive: number): Buffer[] {
    const out: Buffer[] = [];
    let src = input;
    for (;;) {
      const dst = Buffer.allocUnsafe(this.outSize);
      const [remaining, produced, consumed] = this.cctx.compressStream2(dst, src, directive);
      if (produced > 0) out.push(dst.subarray(0, produced));
      src = src.subarray(consumed);
      const done = directive === zstd().EndDirective.continue ? src.length === 0 : remaining === 0;
      if (done) return out;
    }
  }
}

/**
 * Decompresses zstd data that arrives in pieces. `limitBytes` bounds the output: a stream that would
 * decompress to more (a digest lie or a decompression bomb) is INVALID_ARGUMENT before it is buffered.
 */
export class ZstdDecompressor {
  private readonly dctx = new (zstd().DCtx)();
  private readonly outSize = zstd().dStreamOutSize();
  private produced = 0;
  private inFrame = false;

  constructor(
    private readonly limitBytes: number,
    private readonly what: string,
  ) {}

  /** Decompressed bytes so far. */
  get outputBytes(): number {
    return this.produced;
  }

  push(chunk: Uint8Array): Buffer[] {
    const out: Buffer[] = [];
    let src = chunk;
    if (src.length === 0) return out;
    for (;;) {
      const dst = Buffer.allocUnsafe(this.outSize);
      let result: StreamResult;
      try {
        result = this.dctx.decompressStream(dst, src);
      } catch (e) {
        throw new InvalidArgumentError(`${this.what}: not valid zstd data (${(e as Error).message})`, undefined, { cause: e });
      }
      const [remaining, produced, consumed] = result;
      // A call that neither reads nor writes says nothing about the frame: after a frame ends, the
      // decoder already hints at the next frame's header, which is no unfinished frame.
      if (consumed > 0 || produced > 0) this.inFrame = remaining !== 0;
      if (produced > 0) {
        this.produced += produced;
        if (this.produced > this.limitBytes) {
          throw new InvalidArgumentError(`${this.what}: decompresses to more than the digest's ${this.limitBytes} bytes`);
        }
        out.push(dst.subarray(0, produced));
      }
      src = src.subarray(consumed);
      // A full output buffer may hide more output: call again even when all input is consumed.
      if (src.length === 0 && produced < dst.length) return out;
      if (src.length > 0 && consumed === 0 && produced === 0) {
        throw new InvalidArgumentError(`${this.what}: zstd decoder made no progress`);
      }
    }
  }

  /** @throws InvalidArgumentError when the data ended inside a frame. */
  finish(): void {
    if (this.inFrame) throw new InvalidArgumentError(`${this.what}: zstd data ends in the middle of a frame`);
  }
}

/** Decompresses a whole buffer, bounded by the expected size. */
export function zstdDecompressBounded(data: Uint8Array, limitBytes: number, what: string): Buffer {
  const decoder = new ZstdDecompressor(limitBytes, what);
  const parts = decoder.push(data);
  decoder.finish();
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

/** Compresses a whole buffer into one frame. */
export function zstdCompress(data: Uint8Array, level = 1): Buffer {
  const encoder = new ZstdCompressor(level);
  const parts = [...encoder.push(data), ...encoder.finish()];
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}
