// What a client probably meant by a name or value we do not hold: the error texts and
// warnings that say "did you mean …" (docs/api.md "Errors that say what to do").

/** Longer values get no suggestion: no name or value we hold is that long, and the work grows with the length. */
const LONGEST = 100;

/**
 * Up to `max` of `candidates` close to `value`: those equal to it but for case, when
 * there are any (`usd` meant `USD`, not `BSD`); otherwise those within a few edits of
 * it (optimal string alignment distance, case ignored: about one edit per three
 * characters), nearest first, then in code unit order.
 */
export function closest(value: string, candidates: Iterable<string>, max = 3): string[] {
  const wanted = value.toLowerCase();
  if (wanted.length === 0 || wanted.length > LONGEST) return [];
  const bound = Math.max(1, Math.floor(wanted.length / 3));
  const found: [number, string][] = [];
  for (const candidate of candidates) {
    const lower = candidate.toLowerCase();
    if (candidate === value || Math.abs(lower.length - wanted.length) > bound) continue;
    const distance = lower === wanted ? 0 : editDistance(wanted, lower);
    if (distance <= bound) found.push([distance, candidate]);
  }
  found.sort(([da, a], [db, b]) => da - db || (a < b ? -1 : a > b ? 1 : 0));
  const sameButCase = found.filter(([distance]) => distance === 0);
  return (sameButCase.length > 0 ? sameButCase : found).slice(0, max).map(([, candidate]) => candidate);
}

/** `"A"`, `"A" or "B"`, `"A", "B" or "C"`: each value as JSON writes it. */
export function alternatives(values: readonly string[]): string {
  const quoted = values.map((value) => JSON.stringify(value));
  return quoted.length > 1 ? `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}` : (quoted[0] ?? '');
}

/** Insertions, deletions, substitutions and swaps of adjacent characters that turn `a` into `b`. */
function editDistance(a: string, b: string): number {
  // Three rows of the usual table: the one before the previous is what a swap reads.
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, before[j - 2]! + 1);
      row.push(best);
    }
    [before, previous] = [previous, row];
  }
  return previous[b.length]!;
}
