import { createHash } from 'node:crypto';

/** A backend's place in rendezvous hashing: its name (what keys hash against) and its weight. */
export interface RendezvousMember {
  readonly name: string;
  /** Relative share of the keys: a member of weight 2 gets twice the keys of one of weight 1. */
  readonly weight: number;
}

/**
 * Weighted rendezvous (highest random weight) hashing, as Buildbarn's RendezvousShardSelector: each
 * key goes to the member with the highest score `weight / -ln(u)`, where `u` in (0, 1) is a hash of
 * the key and the member's name. A member's scores do not depend on the others, so adding a member
 * moves only the keys it now wins (about weight/total of them), removing one moves only its own, and
 * the order of the list does not matter.
 */
export class RendezvousHashing {
  private readonly seeds: readonly { readonly index: number; readonly weight: number; readonly hi: number; readonly lo: number }[];

  constructor(members: readonly RendezvousMember[]) {
    if (members.length === 0) throw new Error('rendezvous hashing needs at least one member');
    this.seeds = members.map((m, index) => {
      const h = createHash('sha256').update(m.name).digest();
      return { index, weight: m.weight, hi: h.readUInt32BE(0), lo: h.readUInt32BE(4) };
    });
  }

  /**
   * The index (in the constructor's list) of the member `key` goes to. `key` is a SHA-256 in hex (a
   * digest's hash): its first 64 bits are already uniform, so they are used as they are.
   */
  memberOf(key: string): number {
    const khi = Number.parseInt(key.slice(0, 8), 16) >>> 0;
    const klo = Number.parseInt(key.slice(8, 16), 16) >>> 0;
    let best = -1;
    let bestScore = -1;
    for (const s of this.seeds) {
      const score = s.weight / -Math.log(unitInterval(khi ^ s.hi, klo ^ s.lo));
      if (score > bestScore) {
        bestScore = score;
        best = s.index;
      }
    }
    return best;
  }
}

/** A number in (0, 1) from 64 mixed bits (two rounds of murmur3's finalizer across both halves; 53 bits kept). */
function unitInterval(hi: number, lo: number): number {
  const a = fmix32(hi ^ Math.imul(lo, 0x9e3779b1));
  const b = fmix32(lo ^ Math.imul(a, 0x85ebca77));
  // 32 bits of `a` and 21 of `b`, centred in their interval so that neither 0 nor 1 occurs.
  return (a * 2 ** 21 + (b >>> 11) + 0.5) / 2 ** 53;
}

function fmix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
