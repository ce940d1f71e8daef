import { inSlices, Turns } from './slices.ts';

// The decimals a publisher wrote. A metric arrives as doubles, each the double nearest
// the decimal in the publisher's file, which is the shortest text that reads back as
// it (what String(x) prints). Doubles cannot add decimals: 0.1 + 0.2 is not 0.3, and
// a year of cents summed exactly as doubles prints as 3442092909.7400002. With `s` the
// most decimals any value of a column has, every value times 10^s is an integer, and
// integers add exactly: the sum over 10^s is the decimal sum DuckDB's DECIMAL(38, s)
// gives, digit for digit.

/** Beyond this many decimals a column is summed as the doubles it holds (no money or rate has that many). */
export const MAX_SCALE = 12;

/** A double at most this far from zero has a spacing below 1, so one integer of the scaled decimal each. */
const EXACT = 2 ** 52;

const POWERS = Array.from({ length: MAX_SCALE + 1 }, (_, i) => 10 ** i);

/** 10^scale, exact: every power up to 10^22 is a double. */
export const powerOfTen = (scale: number) => POWERS[scale]!;

/**
 * The most decimals the values of a column were written with, or null when some value
 * has more than MAX_SCALE (its column is summed as doubles).
 */
export async function decimalScale(values: Float64Array, turns = new Turns()): Promise<number | null> {
  let scale: number | null = 0;
  await inSlices(
    values.length,
    (start, end) => {
      for (let i = start; i < end && scale !== null; i++) scale = ownScale(values[i]!, scale);
    },
    turns,
  );
  if (scale === null) return null;
  // Each value at the column's scale, not only its own: scaled() must give back its integer exactly.
  const power = POWERS[scale]!;
  let fits = true;
  await inSlices(
    values.length,
    (start, end) => {
      for (let i = start; i < end && fits; i++) {
        const x = values[i]!;
        if (scalesExactly(x, power)) fits = scaled(x, power) / power === x;
      }
    },
    turns,
  );
  return fits ? scale : null;
}

/** The decimals of `x`, or `from` if it has no more; null beyond MAX_SCALE. */
function ownScale(x: number, from: number): number | null {
  for (let scale = from; scale <= MAX_SCALE; scale++) {
    const power = POWERS[scale]!;
    // Too large for the integers of 10^-scale to be told apart by doubles: its shortest text says.
    if (!scalesExactly(x, power)) return Math.max(scale, textScale(x));
    if (scaled(x, power) / power === x) return scale;
  }
  return null;
}

/** The decimals of x's shortest text (`1.5e-7`: 8). */
function textScale(x: number): number {
  const [mantissa, exponent = '0'] = String(x).split('e');
  return Math.max(0, (mantissa!.split('.')[1] ?? '').length - Number(exponent));
}

/** Below this many units a product's rounding and x's own error are an eighth each: Math.round finds the integer. */
const NEAR = 2 ** 50;
/** Veltkamp's splitter for doubles: 2^27 + 1. */
const SPLITTER = 134217729;

/** The rounding error of the product `p` = fl(a × b): a × b = p + error, exactly (Dekker's two-product). */
function productError(a: number, b: number, p: number): number {
  let c = SPLITTER * a;
  const aHigh = c - (c - a);
  const aLow = a - aHigh;
  c = SPLITTER * b;
  const bHigh = c - (c - b);
  const bLow = b - bHigh;
  return aHigh * bHigh - p + aHigh * bLow + aLow * bHigh + aLow * bLow;
}

/**
 * `x` (a value of a column of this scale) as the integer number of 10^-scale it was
 * written as, for |x| × 10^scale below 2^52 (scalesExactly). There decimals of that many
 * places are further apart than doubles, so x × 10^s, exactly, is within half of one of
 * that integer; up to 2^50 the rounded product is too, and beyond it the product's
 * rounding error, found exactly, settles it.
 */
export function scaled(x: number, power: number): number {
  const product = x * power;
  const nearest = Math.round(product);
  if (Math.abs(product) < NEAR) return nearest;
  const off = product - nearest + productError(x, power, product);
  return off > 0.5 ? nearest + 1 : off < -0.5 ? nearest - 1 : nearest;
}

/** Whether `x` × `power` is below 2^52, where `scaled` is exact. */
export const scalesExactly = (x: number, power: number) => Math.abs(x * power) < EXACT;

/**
 * A value too large for `scaled` (a GDP in rupiah, to the cent) as the integer of
 * 10^-scale of the decimal it reads as, in doubles that add up to it exactly: parsed
 * from its shortest text, as DuckDB's VARCHAR of a double gives it. Rare and slow.
 */
export function writtenUnits(x: number, scale: number): number[] {
  const [mantissa, exponent = '0'] = String(x).split('e');
  const [whole, fraction = ''] = mantissa!.split('.');
  const shift = scale - (fraction.length - Number(exponent));
  let units = BigInt(whole! + fraction);
  units = shift >= 0 ? units * 10n ** BigInt(shift) : units / 10n ** BigInt(-shift);
  const parts: number[] = [];
  while (units !== 0n) {
    const part = Number(units);
    parts.push(part);
    units -= BigInt(part);
  }
  return parts;
}

/** The exact decimal text of `integer` × 10^-scale: every digit, trailing zeros trimmed, `.0` on a whole number (as doubles print). */
export function decimalText(integer: bigint, scale: number): string {
  const negative = integer < 0n;
  const digits = (negative ? -integer : integer).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}.${fraction || '0'}`;
}

/** Whether the double nearest an integer number of 10^-scale prints as that decimal: below 2^52 units its spacing is under one. */
export const printsExactly = (integer: number) => Math.abs(integer) < EXACT;
