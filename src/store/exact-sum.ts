import { decimalText, powerOfTen, printsExactly } from './decimals.ts';

// Exact sums. A plain running sum rounds at every step, so its result depends on the
// order of the terms (and DuckDB's on its thread count). Kept as an expansion
// (Shewchuk's non-overlapping partials, as Python's math.fsum keeps them) a sum loses
// nothing, and rounding once at the end gives the double nearest the true sum: one
// answer whatever the order, the grouping or the number of threads. A column written
// as decimals (src/store/decimals.ts) is summed as integers of 10^-scale, so the
// true sum is the decimal one and prints as the decimal it is.

/**
 * Grows the expansion held in `partials[base .. base + length)` by `x`, in place, and
 * returns its new length (at most `length + 1`).
 */
function grow(partials: { [i: number]: number }, base: number, length: number, x: number): number {
  let kept = 0;
  for (let j = 0; j < length; j++) {
    let y = partials[base + j]!;
    if (Math.abs(x) < Math.abs(y)) {
      const t = x;
      x = y;
      y = t;
    }
    const hi = x + y;
    const lo = y - (hi - x);
    if (lo !== 0) partials[base + kept++] = lo;
    x = hi;
  }
  partials[base + kept] = x;
  return kept + 1;
}

/**
 * Adds `x` to `partials` in place: non-overlapping doubles in increasing magnitude
 * whose exact sum is the running total. Usually one or two long.
 */
export function addExact(partials: number[], x: number): void {
  const length = grow(partials, 0, partials.length, x);
  // Shrunk only when a partial vanished: setting length on every add costs more than the add.
  if (partials.length > length) partials.length = length;
}

/** The double nearest the exact sum held in `partials`, ties to even (math.fsum's last step). */
export function roundExact(partials: ArrayLike<number>): number {
  let n = partials.length;
  if (n === 0) return 0;
  let hi = partials[--n]!;
  let lo = 0;
  while (n > 0) {
    const x = hi;
    const y = partials[--n]!;
    hi = x + y;
    lo = y - (hi - x);
    if (lo !== 0) break;
  }
  // hi + lo is exact, but the partials below lo may push a tie at hi's last bit the other way.
  if (n > 0 && ((lo < 0 && partials[n - 1]! < 0) || (lo > 0 && partials[n - 1]! > 0))) {
    const y = lo * 2;
    const x = hi + y;
    if (y === x - hi) hi = x;
  }
  return hi;
}

/**
 * `a - b`, where each is an exact sum held as partials, as partials: the difference of
 * the two true sums, to be rounded once (a difference of the two rounded sums would
 * round three times, and lose everything when they nearly cancel).
 */
export function difference(a: ArrayLike<number>, b: ArrayLike<number>): number[] {
  const partials = Array.from(a);
  for (let i = 0; i < b.length; i++) addExact(partials, -b[i]!);
  return partials;
}

/** The exact integer the partials of a sum of integers add up to (each partial is an integer then). */
function integerSum(partials: ArrayLike<number>): bigint {
  let sum = 0n;
  for (let i = 0; i < partials.length; i++) sum += BigInt(partials[i]!);
  return sum;
}

/**
 * The double nearest the sum held in `partials`: of doubles (scale null), or of
 * integers of 10^-scale, whose sum over 10^scale is one correctly rounded division
 * while it is below 2^52 units, and read from its exact decimal text beyond.
 */
export function sumValue(partials: ArrayLike<number>, scale: number | null): number {
  const units = roundExact(partials);
  if (scale === null) return units;
  return printsExactly(units) ? units / powerOfTen(scale) : Number(decimalText(integerSum(partials), scale));
}

/**
 * The exact decimal of a sum of integers of 10^-scale where the double nearest it
 * would print other digits (from 2^52 units up: 45 trillion at two decimals); undefined
 * where the double prints it, or for a sum of doubles.
 */
export function sumText(partials: ArrayLike<number>, scale: number | null): string | undefined {
  if (scale === null || printsExactly(roundExact(partials))) return undefined;
  return decimalText(integerSum(partials), scale);
}

/** Partials kept inline per group; sums of money need one to three, and a group needing more spills into an array. */
const INLINE = 3;
const SPILLED = 0xff;

/**
 * The exact sums of `count` groups in one typed array, `INLINE` partials each: adding
 * a million values to a hundred thousand groups allocates nothing per group, which
 * arrays of partials did (hundreds of MB of garbage while rollups were built).
 */
export class ExactSums {
  private readonly partials: Float64Array;
  private readonly lengths: Uint8Array;
  private readonly spilled = new Map<number, number[]>();

  /** `scale`: the terms are integers of 10^-scale (a decimal column's); null: doubles. */
  constructor(
    readonly count: number,
    readonly scale: number | null = null,
  ) {
    this.partials = new Float64Array(count * INLINE);
    this.lengths = new Uint8Array(count);
  }

  /** Empty sums of `count` groups over terms like these. */
  like(count: number): ExactSums {
    return new ExactSums(count, this.scale);
  }

  add(g: number, x: number): void {
    const length = this.lengths[g]!;
    if (length === SPILLED) {
      addExact(this.spilled.get(g)!, x);
      return;
    }
    const base = g * INLINE;
    if (length === INLINE) {
      // Full: one more partial may be needed, which only an array has room for.
      const partials = Array.from(this.partials.subarray(base, base + INLINE));
      addExact(partials, x);
      this.spilled.set(g, partials);
      this.lengths[g] = SPILLED;
      return;
    }
    this.lengths[g] = grow(this.partials, base, length, x);
  }

  /** Group `g`'s partials: non-overlapping, increasing in magnitude, summing exactly to its total. */
  partialsOf(g: number): ArrayLike<number> {
    const length = this.lengths[g]!;
    if (length === SPILLED) return this.spilled.get(g)!;
    return this.partials.subarray(g * INLINE, g * INLINE + length);
  }

  /** Adds every partial of `from`'s group `h` into group `g`. */
  addGroup(g: number, from: ExactSums, h: number): void {
    if (from.scale !== this.scale) throw new Error(`adding sums of scale ${from.scale} into sums of scale ${this.scale}`);
    const partials = from.partialsOf(h);
    for (let i = 0; i < partials.length; i++) this.add(g, partials[i]!);
  }

  /** The double nearest group `g`'s sum. */
  rounded(g: number): number {
    return sumValue(this.partialsOf(g), this.scale);
  }

  /** Group `g`'s exact decimal where its double would print other digits (sumText). */
  text(g: number): string | undefined {
    return sumText(this.partialsOf(g), this.scale);
  }
}
