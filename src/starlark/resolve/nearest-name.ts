/**
 * The candidate closest to `name` by edit distance, ignoring case and underscores, if it is close
 * enough to be a likely typo (fewer edits than half the name's length); else undefined.
 * Used for "undefined: x (did you mean y?)".
 */
export function nearestName(name: string, candidates: Iterable<string>): string | undefined {
  const x = fold(name);
  let best: string | undefined;
  let bestDistance = (x.length + 1) >> 1;
  for (const c of candidates) {
    if (c === name) continue;
    const d = editDistance(x, fold(c), bestDistance);
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  return best;
}

function fold(s: string): string {
  return s.replaceAll('_', '').toLowerCase();
}

/** Levenshtein distance, giving up (returning a value > max) once it must exceed max. */
function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    let rowBest = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1), row[j]! + 1, next[j - 1]! + 1);
      next.push(v);
      if (v < rowBest) rowBest = v;
    }
    if (rowBest > max) return rowBest;
    row = next;
  }
  return row[b.length]!;
}
