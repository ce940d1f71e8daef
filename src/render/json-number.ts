// Doubles exactly as DuckDB's to_json prints them, which is what the API has always
// served. DuckDB (yyjson) writes the shortest text that reads back as the same
// double, as JavaScript does, but marks integral values with `.0` (`748386.0`,
// `-0.0`) and writes exponents without a plus sign (`1e21`, `1.5e300`).

/** The text DuckDB's to_json gives `x` (finite; the loader refuses non-finite metrics). */
export function formatDouble(x: number): string {
  if (Object.is(x, -0)) return '-0.0';
  const text = String(x);
  if (text.includes('e')) return text.replace('e+', 'e');
  return text.includes('.') ? text : `${text}.0`;
}

const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
/** "00" to "99": two digits per division. */
const PAIRS = Buffer.from(Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0')).join(''), 'latin1');
/** Below 10^15 hundredths a value has at most 15 significant digits (see writeDouble). */
const MAX_HUNDREDTHS = 1e15;

/**
 * Longest text formatDouble returns; sizes output buffers. Decimal notation runs down
 * to 1e-6, so a 17-digit value below 1e-5 has five zeros after the point and a sign:
 * `-0.0000012345678901234567`, 25 characters. Exponent forms top out at 24
 * (`-2.2250738585072014e-308`), integral ones at 24 (`-123456789012345680000.0`).
 * test/store.test.ts checks the bound over every decimal exponent.
 */
export const MAX_DOUBLE_LENGTH = 25;

/**
 * Writes formatDouble(x) into `out` at `at` and returns the end. Money has at most
 * two decimals, and for those the digits are written straight from the integer
 * number of hundredths, about twice as fast as String(x). That text is the
 * shortest: decimals of at most 15 significant digits are further apart than a
 * double's spacing, so no shorter decimal reads back as the same double. Anything
 * else goes through formatDouble.
 */
export function writeDouble(out: Buffer, at: number, x: number): number {
  const hundredths = Math.round(x * 100);
  if (hundredths / 100 !== x || Math.abs(hundredths) >= MAX_HUNDREDTHS || Object.is(x, -0)) {
    const text = formatDouble(x);
    // Buffer.write stops silently at the end of the buffer: a body cut short must fail, not be served.
    if (out.write(text, at, 'latin1') !== text.length) throw new RangeError(`no room for ${text} at ${at} of ${out.length}`);
    return at + text.length;
  }
  let n = hundredths;
  if (n < 0) {
    out[at++] = MINUS;
    n = -n;
  }
  const cents = n % 100;
  let whole = (n - cents) / 100;
  let digits = 1;
  for (let rest = whole; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  let i = at + digits;
  while (whole >= 100) {
    const next = Math.floor(whole / 100);
    const pair = (whole - next * 100) * 2;
    out[--i] = PAIRS[pair + 1]!;
    out[--i] = PAIRS[pair]!;
    whole = next;
  }
  if (whole >= 10) {
    out[--i] = PAIRS[whole * 2 + 1]!;
    out[--i] = PAIRS[whole * 2]!;
  } else out[--i] = ZERO + whole;
  at += digits;
  out[at++] = DOT;
  if (cents % 10 === 0) out[at++] = ZERO + cents / 10;
  else {
    out[at++] = PAIRS[cents * 2]!;
    out[at++] = PAIRS[cents * 2 + 1]!;
  }
  return at;
}
