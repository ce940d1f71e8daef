import type { DatasetDef } from '../registry.ts';
import {
  type AggregateSource,
  group,
  type Leading,
  type MetricNeeds,
  type MetricTotals,
  rowSpan,
  type SourceSegment,
} from './aggregation.ts';
import { type ColumnStore, codeArray, type Dictionary } from './column-store.ts';
import { inSlices, Turns } from './slices.ts';

/** What aggregates read of a served dataset, built once when its release loads. */
export interface AggregateTables {
  /** The served rows first, then the registry's rollups of them. */
  readonly sources: readonly AggregateSource[];
  /** Each dimension's distinct values in code order, by dimension index. */
  readonly dictionaries: readonly Dictionary[];
  readonly sizes: readonly number[];
  /** Dimension → a value as requested (canonical text) → its dictionary code. */
  readonly codes: ReadonlyMap<string, ReadonlyMap<string, number>>;
}

export async function buildAggregateTables(def: DatasetDef, store: ColumnStore, turns = new Turns()): Promise<AggregateTables> {
  const dictionaries = store.dimensions.map((d) => d.dictionary);
  const sizes = dictionaries.map((d) => d.values.length);
  const codes = new Map(store.dimensions.map((d) => [d.name, new Map(d.dictionary.values.map((value, code) => [String(value), code]))]));
  const sources = [await storeSource(store, turns)];
  const totals = def.totals && {
    index: def.dimensions.indexOf(def.totals.dimension),
    code: codes.get(def.totals.dimension)?.get(def.totals.value),
  };
  // Largest first, each from the smallest table built so far that can answer it.
  const rollups = [...(def.rollups ?? [])]
    .map((keep) => keep.map((name) => def.dimensions.indexOf(name)))
    .sort((a, b) => b.length - a.length);
  for (const keep of rollups) {
    // A rollup without the totals dimension adds up the total rows alone, as aggregates do.
    const fixed = new Map<number, number>();
    if (totals && !keep.includes(totals.index)) {
      if (totals.code === undefined) continue; // no total rows in this release: nothing such a rollup could answer
      fixed.set(totals.index, totals.code);
    }
    const { source, allowed } = chooseSource(sources, keep, new Map([...fixed].map(([d, code]) => [d, new Set([code])])));
    sources.push(await buildRollup(source, keep, sizes, allowed, fixed, turns));
  }
  return { sources, dictionaries, sizes, codes };
}

/**
 * The table whose scan reads the fewest rows that can group by `groupBy` with the filters
 * `allowed` (dimension → codes), and the filters its scan still applies: a rollup
 * must keep every dimension grouped or filtered, except one it fixed to exactly the
 * code the filter asks for.
 */
export function chooseSource(
  sources: readonly AggregateSource[],
  groupBy: readonly number[],
  allowed: ReadonlyMap<number, ReadonlySet<number>>,
): { source: AggregateSource; allowed: ReadonlyMap<number, ReadonlySet<number>> } {
  const answers = (s: AggregateSource) =>
    groupBy.every((d) => s.kept.has(d)) &&
    [...allowed.keys()].every((d) => s.kept.has(d) || s.fixed.has(d)) &&
    [...s.fixed].every(([d, code]) => !groupBy.includes(d) && allowed.get(d)?.size === 1 && allowed.get(d)!.has(code));
  // By the rows its scan reads: a filter on the leading dimension (year) reads one span of them.
  const read = (s: AggregateSource) => {
    const span = rowSpan(s, allowed);
    return span.to - span.from;
  };
  const source = sources.filter(answers).reduce((a, b) => (read(b) < read(a) ? b : a));
  return { source, allowed: new Map([...allowed].filter(([d]) => !source.fixed.has(d))) };
}

/** Bytes of the rollup tables (every source but the served rows themselves). */
export function rollupBytes(tables: AggregateTables): number {
  let bytes = 0;
  for (const source of tables.sources.slice(1)) {
    for (const segment of source.segments)
      bytes += segment.codes.byteLength + segment.codeOfCombination.reduce((sum, a) => sum + a.byteLength, 0);
    bytes += source.counts?.byteLength ?? 0;
    for (const totals of source.metrics) {
      bytes +=
        'values' in totals
          ? totals.values.byteLength
          : totals.offsets.byteLength + totals.partials.byteLength + totals.min.byteLength + totals.max.byteLength;
    }
  }
  return bytes;
}

/** The served store as a source. */
async function storeSource(store: ColumnStore, turns: Turns): Promise<AggregateSource> {
  const segments = store.segments.map((segment, s): SourceSegment => {
    const members = store.dimensions.map((column, index) => ({ column, index })).filter(({ column }) => column.segment === s);
    return {
      dimensions: members.map((m) => m.index),
      codes: segment.codes,
      codeOfCombination: members.map((m) => m.column.codeOfCombination),
    };
  });
  const first = store.dimensions[0];
  return {
    rows: store.rowCount,
    kept: new Set(store.dimensions.keys()),
    fixed: new Map(),
    segments,
    counts: null,
    metrics: store.metrics.map((m) => ({ values: m.values, scale: m.scale })),
    leading: first ? await leadingOf(segments, store.rowCount, 0, first.dictionary.values.length, turns) : null,
  };
}

/** Where each code of `dimension` starts in rows laid out as `segments`, if they ascend by it (checked, not assumed); else null. */
export async function leadingOf(
  segments: readonly SourceSegment[],
  rows: number,
  dimension: number,
  size: number,
  turns = new Turns(),
): Promise<Leading | null> {
  const segment = segments.find((s) => s.dimensions.includes(dimension));
  if (!segment) return null;
  const codeOf = segment.codeOfCombination[segment.dimensions.indexOf(dimension)]!;
  const starts = new Uint32Array(size + 1);
  let last = 0;
  let ascending = true;
  await inSlices(
    rows,
    (from, to) => {
      for (let r = from; r < to && ascending; r++) {
        const code = codeOf[segment.codes[r]!]!;
        if (code < last) ascending = false;
        // Each code from the last one seen up to this one starts here (a code with no rows spans nothing).
        for (; last < code; last++) starts[last + 1] = r;
      }
    },
    turns,
  );
  if (!ascending) return null;
  for (; last < size; last++) starts[last + 1] = rows;
  return { dimension, starts };
}

/**
 * A rollup table: the rows of `source` that pass `allowed`, grouped by `keep`
 * (dimension indexes), with each metric's count, exact sum, minimum and maximum,
 * laid out as a source itself. `fixed` names the dimensions it dropped after
 * keeping one code of each.
 */
async function buildRollup(
  source: AggregateSource,
  keep: readonly number[],
  sizes: readonly number[],
  allowed: ReadonlyMap<number, ReadonlySet<number>>,
  fixed: ReadonlyMap<number, number>,
  turns: Turns,
): Promise<AggregateSource> {
  const needs = source.metrics.map((_, index): MetricNeeds => ({ index, sum: true, min: true, max: true }));
  const groups = await group(source, { groupBy: keep, sizes, allowed, metrics: needs, turns });
  const width = keep.length;
  const segments: SourceSegment[] = [];
  for (const [i, d] of keep.entries()) {
    const codes = codeArray(sizes[d]!, groups.count);
    await inSlices(
      groups.count,
      (start, end) => {
        for (let g = start; g < end; g++) codes[g] = groups.codes[g * width + i]!;
      },
      turns,
    );
    const identity = codeArray(sizes[d]!, sizes[d]!);
    for (let c = 0; c < sizes[d]!; c++) identity[c] = c;
    segments.push({ dimensions: [d], codes, codeOfCombination: [identity] });
  }
  const metrics: MetricTotals[] = [];
  for (const m of needs.keys()) {
    const sums = groups.sums[m]!;
    const offsets = new Uint32Array(groups.count + 1);
    await inSlices(
      groups.count,
      (start, end) => {
        for (let g = start; g < end; g++) offsets[g + 1] = offsets[g]! + sums.partialsOf(g).length;
      },
      turns,
    );
    const partials = new Float64Array(offsets[groups.count]!);
    await inSlices(
      groups.count,
      (start, end) => {
        for (let g = start; g < end; g++) partials.set(sums.partialsOf(g), offsets[g]!);
      },
      turns,
    );
    metrics.push({ offsets, partials, min: groups.min[m]!, max: groups.max[m]!, scale: sums.scale });
  }
  // Groups come in the order first seen, so a rollup that keeps the leading dimension ascends by it as its source does.
  const leading = keep.includes(0) ? await leadingOf(segments, groups.count, 0, sizes[0]!, turns) : null;
  return { rows: groups.count, kept: new Set(keep), fixed, segments, counts: Uint32Array.from(groups.rows), metrics, leading };
}
