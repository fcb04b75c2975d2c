import { StarObject, type Sequence, type Value } from './value.js';

/** The lazy result of `range(start, stop, step)`: an immutable sequence of ints. */
export class StarRange extends StarObject implements Sequence {
  readonly length: number;
  constructor(
    readonly start: number,
    readonly stop: number,
    readonly step: number,
  ) {
    super();
    const n = step > 0 ? Math.ceil((stop - start) / step) : Math.ceil((start - stop) / -step);
    this.length = Math.max(0, n);
  }
  get type(): string {
    return 'range';
  }
  override truth(): boolean {
    return this.length > 0;
  }
  override len(): number {
    return this.length;
  }
  index(i: number): Value {
    return this.start + i * this.step;
  }
  slice(start: number, end: number, step: number): Value {
    const newStart = this.start + start * this.step;
    const newStop = this.start + end * this.step;
    return new StarRange(newStart, newStop, this.step * step);
  }
  contains(x: number): boolean {
    if (this.length === 0) return false;
    if (this.step > 0 ? x < this.start || x >= this.stop : x > this.start || x <= this.stop) return false;
    return (x - this.start) % this.step === 0;
  }
  override *iterate(): Iterable<Value> {
    for (let i = 0, v = this.start; i < this.length; i++, v += this.step) yield v;
  }
  /** Ranges are equal when they denote the same sequence of ints. */
  override equals(other: StarObject): boolean {
    const o = other as StarRange;
    if (this.length !== o.length) return false;
    if (this.length === 0) return true;
    if (this.start !== o.start) return false;
    return this.length === 1 || this.step === o.step;
  }
  repr(): string {
    if (this.step !== 1) return `range(${this.start}, ${this.stop}, ${this.step})`;
    if (this.start !== 0) return `range(${this.start}, ${this.stop})`;
    return `range(${this.stop})`;
  }
}
