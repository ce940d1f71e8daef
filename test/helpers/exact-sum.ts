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
