// The exact sum of doubles by BigInt arithmetic, as a reference for the service's
// own: every finite double is an integer multiple of 2^-1074, so the exact sum is an
// integer, rounded once (ties to even) to the nearest double.

const view = new DataView(new ArrayBuffer(8));

/** `x` × 2^1074, exactly. */
function scaled(x: number): bigint {
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const exponent = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  const magnitude = exponent === 0 ? fraction : (fraction | (1n << 52n)) << BigInt(exponent - 1);
  return bits >> 63n ? -magnitude : magnitude;
}

/** The double nearest the exact sum of `values` (normal results; subnormal sums are not needed here). */
export function exactSum(values: readonly number[]): number {
  const total = values.reduce((sum, x) => sum + scaled(x), 0n);
  const negative = total < 0n;
  let magnitude = negative ? -total : total;
  const drop = magnitude.toString(2).length - 53;
  let power = -1074;
  if (drop > 0) {
    const kept = magnitude >> BigInt(drop);
    const rest = magnitude - (kept << BigInt(drop));
    const half = 1n << BigInt(drop - 1);
    magnitude = rest > half || (rest === half && (kept & 1n) === 1n) ? kept + 1n : kept;
    power += drop;
  }
  const result = Number(magnitude) * 2 ** power;
  return negative ? -result : result;
}

/** `x` as the decimal it reads as (its shortest text): an integer of 10^-scale. */
function written(x: number): { units: bigint; scale: number } {
  const [mantissa, exponent = '0'] = String(x).split('e');
  const [whole, fraction = ''] = mantissa!.split('.');
  const scale = fraction.length - Number(exponent);
  const units = BigInt(whole! + fraction);
  return scale >= 0 ? { units, scale } : { units: units * 10n ** BigInt(-scale), scale: 0 };
}

/**
 * The double nearest the exact sum of `values` as the decimals they were written as
 * (each its shortest text): what the service's sums of a decimal column are.
 */
export function writtenSum(values: readonly number[]): number {
  const decimals = values.map(written);
  const scale = Math.max(0, ...decimals.map((d) => d.scale));
  const total = decimals.reduce((sum, d) => sum + d.units * 10n ** BigInt(scale - d.scale), 0n);
  const negative = total < 0n;
  const digits = (negative ? -total : total).toString().padStart(scale + 1, '0');
  return Number(`${negative ? '-' : ''}${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}0`);
}

/** Whether the service sums a column of these values as decimals: each written with at most 12 places (src/store/decimals.ts). */
export function isDecimalColumn(values: Iterable<number>): boolean {
  for (const x of values) if (Math.max(0, written(x).scale) > 12) return false;
  return true;
}

/** The service's sum of `values` from a column that `isDecimalColumn` says is decimal or not. */
export const columnSum = (values: readonly number[], decimal: boolean) => (decimal ? writtenSum(values) : exactSum(values));
