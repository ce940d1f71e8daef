import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decimalScale, decimalText, powerOfTen, scaled, writtenUnits } from '../src/store/decimals.ts';
import { addExact, difference, ExactSums, roundExact, sumText, sumValue } from '../src/store/exact-sum.ts';
import { exactSum } from './helpers/exact-sum.ts';

// Exact sums against BigInt arithmetic: every finite double is an integer multiple of
// 2^-1074, so their exact sum is an integer, rounded once to the nearest double.

function mulberry32(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('sums of values across 60 binades, both signs, with cancellation, equal the exact sum rounded once', () => {
  const random = mulberry32(15);
  for (let trial = 0; trial < 300; trial++) {
    const n = 1 + Math.floor(random() * 200);
    const values = Array.from({ length: n }, () => (random() < 0.5 ? -1 : 1) * (1 + random()) * 2 ** Math.floor(random() * 60 - 30));
    // Cancellation: some values and their negatives, so the true sum is tiny against its terms.
    if (trial % 3 === 0) values.push(...values.slice(0, n >> 1).map((x) => -x));
    const want = exactSum(values);
    const partials: number[] = [];
    for (const x of values) addExact(partials, x);
    assert.is(roundExact(partials), want, `trial ${trial}`);
    // The same through typed groups, which spill past three partials, and in another order.
    const sums = new ExactSums(2);
    for (const x of values) sums.add(1, x);
    for (const x of [...values].reverse()) sums.add(0, x);
    assert.is(sums.rounded(1), want, `trial ${trial}, typed`);
    assert.is(sums.rounded(0), want, `trial ${trial}, reversed`);
    // Merging one group into another adds exactly.
    const merged = new ExactSums(1);
    merged.addGroup(0, sums, 1);
    merged.addGroup(0, sums, 0);
    assert.is(merged.rounded(0), exactSum([...values, ...values]), `trial ${trial}, merged`);
  }
});

test('the difference of two exact sums is their true difference rounded once, also where they nearly cancel', () => {
  const random = mulberry32(30);
  let beatsRounded = 0;
  for (let trial = 0; trial < 300; trial++) {
    const a = Array.from({ length: 1 + Math.floor(random() * 50) }, () => (1 + random()) * 2 ** Math.floor(random() * 40 - 10));
    // b is a with small changes: the two sums nearly cancel.
    const b = a.map((x) => (random() < 0.3 ? x * (1 + (random() - 0.5) * 1e-9) : x));
    const pa: number[] = [];
    const pb: number[] = [];
    for (const x of a) addExact(pa, x);
    for (const x of b) addExact(pb, x);
    const want = exactSum([...a, ...b.map((x) => -x)]);
    assert.is(sumValue(difference(pa, pb), null), want, `trial ${trial}`);
    if (roundExact(pa) - roundExact(pb) !== want) beatsRounded++;
  }
  assert.ok(beatsRounded > 0, 'the difference of the rounded sums is off on some of these');
});

test('money: a plain running sum is off where the exact one is not', () => {
  const values = Array.from({ length: 1000 }, (_, i) => Number((((i * 7919) % 100000) / 100 + 0.01).toFixed(2)));
  const naive = values.reduce((a, b) => a + b, 0);
  const partials: number[] = [];
  for (const x of values) addExact(partials, x);
  assert.is(roundExact(partials), exactSum(values));
  assert.ok(naive !== exactSum(values), 'this input is one a naive sum gets wrong');
});

/** A random decimal of at most `scale` places and `digits` significant digits, as its text. */
function decimal(random: () => number, scale: number, digits: number): string {
  const units = BigInt(Math.floor(random() * 10 ** digits)) * (random() < 0.3 ? -1n : 1n);
  return decimalText(units, scale);
}

test('decimal columns: the scale is the most places written, and sums are the decimal sums digit for digit', async () => {
  const random = mulberry32(44);
  for (const [scale, digits] of [
    [0, 12],
    [2, 15],
    [3, 14],
    [4, 12],
    [6, 10],
  ] as const) {
    for (let trial = 0; trial < 40; trial++) {
      const texts = Array.from({ length: 1 + Math.floor(random() * 400) }, () => decimal(random, scale, digits));
      const values = Float64Array.from(texts, Number);
      const found = await decimalScale(values);
      assert.ok(found !== null && found <= scale, `scale ${found} for ${scale}`);
      const sums = new ExactSums(1, found);
      for (const x of values) sums.add(0, scaled(x, powerOfTen(found!)));
      // The exact sum in integers of 10^-scale, by BigInt from the texts.
      const units = texts.reduce((sum, t) => {
        const [whole, fraction = ''] = t.split('.');
        return sum + BigInt(whole! + fraction.padEnd(scale, '0').slice(0, scale));
      }, 0n);
      const want = decimalText(units, scale);
      assert.is(sums.text(0) ?? String(sums.rounded(0)).replace(/^(-?\d+)$/, '$1.0'), want, `${scale}/${digits} #${trial}`);
      assert.is(sums.rounded(0), Number(want));
    }
  }
});

test('decimalScale: null for too many places; values too long for a double are read from their text', async () => {
  assert.is(await decimalScale(Float64Array.from([0.1, 0.25, 3])), 2);
  assert.is(await decimalScale(Float64Array.from([1 / 3])), null);
  assert.is(await decimalScale(Float64Array.from([0.1, 2 ** 60])), 1);
  // 2^60 reads as 1152921504606847000 (its shortest text), as DuckDB's VARCHAR of it does.
  assert.is(
    writtenUnits(2 ** 60, 2).reduce((sum, part) => sum + BigInt(part), 0n),
    115292150460684700000n,
  );
  // Between 2^51 and 2^52 units the rounded product can be half a unit off; scaled is not.
  assert.is(38403839548983.52 * 100, 3840383954898352.5);
  assert.is(scaled(38403839548983.52, 100), 3840383954898352);
  assert.is(await decimalScale(Float64Array.from([2 ** 50])), 0);
  assert.is(await decimalScale(new Float64Array(0)), 0);
  assert.is(decimalText(-5n, 3), '-0.005');
  assert.is(decimalText(1200n, 2), '12.0');
  assert.is(sumText([1], null), undefined);
});

test.run();
