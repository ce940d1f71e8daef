import type { DatasetDef } from '../registry.ts';
import { type AggregateTables, chooseSource } from './aggregate-tables.ts';
import { type AggregateSource, group, type MetricTotals } from './aggregation.ts';
import type { ExactSums } from './exact-sum.ts';

// The other side of a ratio across datasets (`per=` on /v1/aggregate): a metric of
// another dataset summed exactly per key (adults per country, state and year), found
// by the values of a numerator row's key dimensions. Built once per release and
// denominator, from the denominator dataset's own column store.

/** A denominator metric's exact sum per distinct key of its dataset. */
export interface DenominatorTable {
  /** Key dimensions, as the registry names them. */
  readonly keys: readonly string[];
  readonly count: number;
  readonly sums: ExactSums;
  /** The key with these codes (the denominator dataset's, one per key dimension), or -1 when it has no rows. */
  find(codes: readonly number[]): number;
}

const tablesBuilt = new WeakMap<AggregateTables, Map<string, Promise<DenominatorTable>>>();

/**
 * `metric` of `def` (the denominator dataset) summed per distinct value of `keys`.
 * Rows that total others (national rows) are read only where the key has their
 * dimension, where a key's value tells which rows it means.
 */
export function denominatorTable(
  def: DatasetDef,
  tables: AggregateTables,
  keys: readonly string[],
  metric: string,
): Promise<DenominatorTable> {
  let built = tablesBuilt.get(tables);
  if (!built) {
    built = new Map();
    tablesBuilt.set(tables, built);
  }
  const id = JSON.stringify([keys, metric]);
  let table = built.get(id);
  if (!table) {
    table = buildTable(def, tables, keys, metric);
    built.set(id, table);
    table.catch(() => built.delete(id));
  }
  return table;
}

async function buildTable(def: DatasetDef, tables: AggregateTables, keys: readonly string[], metric: string): Promise<DenominatorTable> {
  const dims = keys.map((k) => def.dimensions.indexOf(k));
  const allowed = new Map<number, Set<number>>();
  const totals = def.totals;
  const totalsCode = totals && tables.codes.get(totals.dimension)?.get(totals.value);
  if (totals && !keys.includes(totals.dimension) && totalsCode !== undefined)
    allowed.set(def.dimensions.indexOf(totals.dimension), new Set([totalsCode]));
  const { source, allowed: scanned } = chooseSource(tables.sources, dims, allowed);
  const m = def.metrics.indexOf(metric);
  const groups = await group(source, {
    groupBy: dims,
    sizes: tables.sizes,
    allowed: scanned,
    metrics: [{ index: m, sum: true, min: false, max: false }],
  });
  const radix = dims.map((_, i) => dims.slice(i + 1).reduce((product, d) => product * tables.sizes[d]!, 1));
  const index = new Map<number, number>();
  for (let g = 0; g < groups.count; g++) {
    let key = 0;
    for (let i = 0; i < dims.length; i++) key += groups.codes[g * dims.length + i]! * radix[i]!;
    index.set(key, g);
  }
  return {
    keys,
    count: groups.count,
    sums: groups.sums[0]!,
    find(codes) {
      let key = 0;
      for (let i = 0; i < codes.length; i++) {
        if (codes[i]! < 0) return -1;
        key += codes[i]! * radix[i]!;
      }
      return index.get(key) ?? -1;
    },
  };
}

const translations = new WeakMap<AggregateTables, WeakMap<AggregateTables, Map<string, Int32Array>>>();

/**
 * For each code of `dimension` in `from`, the code of the same value in `to`; -1 where
 * `to` has no such value. Made once per pair of datasets' tables and dimension (a
 * release's codes never change), not looked up per value on every `per=` answer.
 */
export function translateCodes(from: AggregateTables, fromDef: DatasetDef, to: AggregateTables, dimension: string): Int32Array {
  let byTarget = translations.get(from);
  if (!byTarget) {
    byTarget = new WeakMap();
    translations.set(from, byTarget);
  }
  let byDimension = byTarget.get(to);
  if (!byDimension) {
    byDimension = new Map();
    byTarget.set(to, byDimension);
  }
  let codes = byDimension.get(dimension);
  if (!codes) {
    const values = from.dictionaries[fromDef.dimensions.indexOf(dimension)]!.values;
    const target = to.codes.get(dimension)!;
    codes = Int32Array.from(values, (value) => target.get(String(value)) ?? -1);
    byDimension.set(dimension, codes);
  }
  return codes;
}

const alignments = new WeakMap<AggregateTables, WeakMap<AggregateTables, boolean>>();

/**
 * When `den`'s rows are `num`'s rows (the same dimension values, row for row, so
 * every table built from them lines up too: turnover beside ggr), the totals of
 * `den`'s metric `metric` in the table matching each of `num`'s; undefined otherwise.
 * Checked once per pair of releases' tables, by comparing their codes.
 */
export function alignedTotals(
  num: AggregateTables,
  den: AggregateTables,
  metric: number,
): ((source: AggregateSource) => MetricTotals) | undefined {
  let known = alignments.get(num);
  if (!known) {
    known = new WeakMap();
    alignments.set(num, known);
  }
  let same = known.get(den);
  if (same === undefined) {
    same = sameRows(num, den);
    known.set(den, same);
  }
  if (!same) return undefined;
  return (source) => den.sources[num.sources.indexOf(source)]!.metrics[metric]!;
}

function sameRows(a: AggregateTables, b: AggregateTables): boolean {
  if (a.sources.length !== b.sources.length || a.dictionaries.length !== b.dictionaries.length) return false;
  const sameValues = a.dictionaries.every(
    (d, i) => d.values.length === b.dictionaries[i]!.values.length && d.values.every((v, k) => v === b.dictionaries[i]!.values[k]),
  );
  return sameValues && a.sources.every((s, i) => sameSource(s, b.sources[i]!));
}

function sameSource(a: AggregateSource, b: AggregateSource): boolean {
  const sameSet = (x: Iterable<unknown>, y: Iterable<unknown>) => JSON.stringify([...x]) === JSON.stringify([...y]);
  return (
    a.rows === b.rows &&
    sameSet(a.kept, b.kept) &&
    sameSet(a.fixed, b.fixed) &&
    (a.counts === null ? b.counts === null : b.counts !== null && sameBytes(a.counts, b.counts)) &&
    a.segments.length === b.segments.length &&
    a.segments.every((s, i) => {
      const t = b.segments[i]!;
      return (
        sameSet(s.dimensions, t.dimensions) &&
        sameBytes(s.codes, t.codes) &&
        s.codeOfCombination.every((c, k) => sameBytes(c, t.codeOfCombination[k]!))
      );
    })
  );
}

function sameBytes(a: ArrayBufferView, b: ArrayBufferView): boolean {
  if (a.constructor !== b.constructor || a.byteLength !== b.byteLength) return false;
  return Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)) === 0;
}
