import { positionalArgs } from '../args.js';
import type { StarBytes } from '../values/bytes.js';
import type { MethodImpl } from '../values/callable.js';
import { StarObject, type Value } from '../values/value.js';

/** `b.elems()`: an iterable view of a bytes value's ints. */
class BytesElems extends StarObject {
  constructor(readonly bytes: StarBytes) {
    super();
  }
  get type(): string {
    return 'bytes.elems';
  }
  override iterate(): Iterable<Value> {
    return Array.from(this.bytes.data);
  }
  repr(): string {
    return `${this.bytes.repr()}.elems()`;
  }
}

export const BYTES_METHODS: ReadonlyMap<string, MethodImpl<StarBytes>> = new Map<string, MethodImpl<StarBytes>>([
  [
    'elems',
    (_t, b, args, kwargs) => {
      positionalArgs('elems', args, kwargs, 0, 0);
      return new BytesElems(b);
    },
  ],
]);
