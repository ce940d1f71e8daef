import type { DatasetDef } from '../registry.ts';
import { buildRollup, rowSpan, storeSource, type AggregateSource } from './aggregation.ts';
import type { ColumnStore, Dictionary } from './column-store.ts';

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

export async function buildAggregateTables(def: DatasetDef, store: ColumnStore): Promise<AggregateTables> {
  const dictionaries = store.dimensions.map((d) => d.dictionary);
  const sizes = dictionaries.map((d) => d.values.length);
  const codes = new Map(store.dimensions.map((d) => [d.name, new Map(d.dictionary.values.map((value, code) => [String(value), code]))]));
  const sources = [await storeSource(store)];
  const totals = def.totals && { index: def.dimensions.indexOf(def.totals.dimension), code: codes.get(def.totals.dimension)?.get(def.totals.value) };
  // Largest first, each from the smallest table built so far that can answer it.
  const rollups = [...(def.rollups ?? [])].map((keep) => keep.map((name) => def.dimensions.indexOf(name))).sort((a, b) => b.length - a.length);
  for (const keep of rollups) {
    // A rollup without the totals dimension adds up the total rows alone, as aggregates do.
    const fixed = new Map<number, number>();
    if (totals && !keep.includes(totals.index)) {
      if (totals.code === undefined) continue; // no total rows in this release: nothing such a rollup could answer
      fixed.set(totals.index, totals.code);
    }
    const { source, allowed } = chooseSource(sources, keep, new Map([...fixed].map(([d, code]) => [d, new Set([code])])));
    sources.push(await buildRollup(source, keep, sizes, allowed, fixed));
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
    for (const segment of source.segments) bytes += segment.codes.byteLength + segment.codeOfCombination.reduce((sum, a) => sum + a.byteLength, 0);
    bytes += source.counts?.byteLength ?? 0;
    for (const totals of source.metrics) {
      bytes += 'values' in totals ? totals.values.byteLength : totals.offsets.byteLength + totals.partials.byteLength + totals.min.byteLength + totals.max.byteLength;
    }
  }
  return bytes;
}
