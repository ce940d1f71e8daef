import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent, quoteLiteral } from '../../src/duckdb/sql-text.ts';
import { DATASETS, DENOMINATORS, type DenominatorName, denominatorKeys } from '../../src/registry.ts';

// What /v1/aggregate's derived measures must be, computed by DuckDB from a release's
// Parquet files: sums as exact DECIMALs, the previous year by a window over the year's
// value (RANGE 1 PRECEDING), shares by a window over the total, ratios by a join on
// the denominator's keys. Each ratio divides the DECIMAL sums once, as doubles.

export interface DerivedCase {
  readonly name: string;
  readonly metric: 'ggr' | 'turnover' | 'country';
  /** The request's parameters after `metric=`. */
  readonly query: string;
  readonly groupBy: readonly string[];
  /** Answer key → [metric, fn]: the measures, in the request's order. */
  readonly measures: Readonly<Record<string, readonly [string, 'sum' | 'avg' | 'min' | 'max']>>;
  /** SQL over the file's columns: every filter but the years and the share dimension's. */
  readonly where: string;
  /** SQL on `year`: the years shown (the rows the answer adds up, priors aside). */
  readonly years?: string;
  /** SQL: the share dimension's own filter, which narrows the groups but not their total. */
  readonly shareWhere?: string;
  readonly compare?: boolean;
  readonly share?: string;
  readonly per?: DenominatorName;
}

/** Each value as its publisher wrote it (its shortest text, as DuckDB prints a double), exactly: 26 digits before the point, 12 after. */
const DECIMAL = 'VARCHAR::DECIMAL(38,12)';
const q = quoteIdent;

export type Expected = Map<string, Record<string, number | null>>;

export const groupKey = (dimensions: Record<string, unknown>, groupBy: readonly string[]) =>
  JSON.stringify(groupBy.map((d) => dimensions[d] ?? null));

/** Every group the answer must hold, by groupKey, with every value key and `rows`. */
export async function expectedGroups(connection: DuckDBConnection, releaseDir: string, c: DerivedCase): Promise<Expected> {
  const file = (dataset: string) => quoteLiteral(path.join(releaseDir, `${dataset}.parquet`));
  const dims = c.groupBy.map(q);
  const by = (list: readonly string[]) => (list.length ? `GROUP BY ${list.join(', ')}` : '');
  const years = c.years ?? 'TRUE';
  const metrics = [...new Set(Object.values(c.measures).map(([m]) => m))];
  const aggregates = metrics.flatMap((m) => [
    `sum(${q(m)}::${DECIMAL}) AS ${q(`s_${m}`)}`,
    `min(${q(m)}) AS ${q(`min_${m}`)}`,
    `max(${q(m)}) AS ${q(`max_${m}`)}`,
  ]);
  const others = c.groupBy.filter((d) => d !== 'year').map(q);
  const window = `(${others.length ? `PARTITION BY ${others.join(', ')} ` : ''}ORDER BY year RANGE BETWEEN 1 PRECEDING AND 1 PRECEDING)`;
  const select: string[] = [
    ...dims.map((d, i) => (c.groupBy[i] === 'year' ? `${d}::INTEGER AS ${d}` : `${d}::VARCHAR AS ${d}`)),
    'n::INTEGER AS "rows"',
  ];
  for (const [key, [m, fn]] of Object.entries(c.measures)) {
    const s = q(`s_${m}`);
    const value = fn === 'sum' ? `${s}::DOUBLE` : fn === 'avg' ? `${s}::DOUBLE / n` : `${q(`${fn}_${m}`)}`;
    select.push(`${value} AS ${q(key)}`);
    if (c.compare) {
      const prevSum = `max(${s}) OVER ${window}`;
      const prev = fn === 'sum' ? `${prevSum}::DOUBLE` : `max(${value}) OVER ${window}`;
      const change = fn === 'sum' ? `(${s} - ${prevSum})::DOUBLE` : `(${value} - ${prev})`;
      select.push(
        `${prev} AS ${q(`${key}_prev`)}`,
        `${change} AS ${q(`${key}_change`)}`,
        `CASE WHEN ${prev} = 0 THEN NULL ELSE ${change} / ${prev} END AS ${q(`${key}_pct_change`)}`,
      );
    }
    if (c.share && fn === 'sum')
      select.push(`CASE WHEN t.${q(`t_${m}`)} = 0 THEN NULL ELSE ${s}::DOUBLE / t.${q(`t_${m}`)}::DOUBLE END AS ${q(`${key}_share`)}`);
    if (c.per && fn === 'sum') {
      select.push(`CASE WHEN p.missing > 0 OR p.d = 0 THEN NULL ELSE ${s}::DOUBLE / p.d::DOUBLE END AS ${q(`${key}_per_${c.per}`)}`);
    }
  }
  const ctes = [
    `src AS (SELECT * FROM read_parquet(${file(c.metric)}) WHERE ${c.where})`,
    // With compare the years before the ones shown are read too, for the window.
    `rows AS (SELECT * FROM src WHERE ${c.shareWhere ?? 'TRUE'} AND ${c.compare ? 'TRUE' : years})`,
    `g AS (SELECT ${[...dims, 'count(*) AS n', ...aggregates].join(', ')} FROM rows ${by(dims)})`,
  ];
  let from = 'g';
  const joins: string[] = [];
  if (c.share) {
    // The total over every value of the share dimension, its own filter dropped, summed by a window over its groups.
    const shareOthers = c.share === 'all' ? [] : c.groupBy.filter((d) => d !== c.share).map(q);
    const national = c.share === 'state' || (c.share === 'all' && c.groupBy.includes('state')) ? "state = ''" : 'TRUE';
    const sums = metrics.map(
      (m) => `sum(sum(${q(m)}::${DECIMAL})) OVER (${shareOthers.length ? `PARTITION BY ${shareOthers.join(', ')}` : ''}) AS ${q(`t_${m}`)}`,
    );
    const shareBy = c.share === 'all' ? [] : c.groupBy.filter((d) => d !== c.share).map(q);
    const shareYears = c.share === 'year' ? 'TRUE' : years;
    ctes.push(
      `t AS (SELECT DISTINCT ${[...shareBy, ...sums].join(', ')} FROM src WHERE ${shareYears} AND ${national} ${by([...shareBy, ...(c.share === 'all' ? [] : [q(c.share)])])})`,
    );
    joins.push(shareBy.length ? `LEFT JOIN t USING (${shareBy.join(', ')})` : 'CROSS JOIN t');
  }
  if (c.per) {
    const def = DATASETS.find((d) => d.name === c.metric)!;
    const denominator = DENOMINATORS[c.per];
    const keys = denominatorKeys(denominator, def).map(q);
    ctes.push(
      `k AS (SELECT DISTINCT ${[...dims, ...keys.filter((k) => !dims.includes(k))].join(', ')} FROM rows)`,
      `d AS (SELECT ${keys.join(', ')}, sum(${q(c.per)}::${DECIMAL}) AS d FROM read_parquet(${file(denominator.dataset)}) ${by(keys)})`,
      `p AS (SELECT ${[...dims, 'sum(d.d) AS d', 'count(*) FILTER (WHERE d.d IS NULL) AS missing'].join(', ')} FROM k LEFT JOIN d USING (${keys.join(', ')}) ${by(dims)})`,
    );
    joins.push(dims.length ? `LEFT JOIN p USING (${dims.join(', ')})` : 'CROSS JOIN p');
  }
  from = `${from} ${joins.join(' ')}`;
  // The windows see every year read (priors included); the years shown are kept after.
  const sql = `WITH ${ctes.join(',\n')} SELECT * FROM (SELECT ${select.join(', ')}, ${c.groupBy.includes('year') ? 'year' : 'NULL'} AS shown_year FROM ${from}) WHERE "rows" > 0 ${c.groupBy.includes('year') ? `AND ${years.replaceAll('year', 'shown_year')}` : ''}`;
  const reader = await connection.runAndReadAll(sql);
  const expected: Expected = new Map();
  for (const row of reader.getRowObjectsJS()) {
    const dimensions = Object.fromEntries(c.groupBy.map((d) => [d, row[d]]));
    const values: Record<string, number | null> = {};
    for (const [name, value] of Object.entries(row))
      if (!c.groupBy.includes(name) && name !== 'shown_year') values[name] = value === null ? null : Number(value);
    expected.set(groupKey(dimensions, c.groupBy), values);
  }
  return expected;
}

/** Equal to 1e-12 relative, or both null. */
export function close(served: number | null, want: number | null): boolean {
  if (served === null || want === null) return served === want;
  return served === want || Math.abs(served - want) <= 1e-12 * Math.max(Math.abs(served), Math.abs(want));
}

/** The keys of the rows of a case's groups that have no denominator row, from DuckDB. */
export async function expectedUnmatched(
  connection: DuckDBConnection,
  releaseDir: string,
  c: DerivedCase,
): Promise<Array<Record<string, unknown>>> {
  const def = DATASETS.find((d) => d.name === c.metric)!;
  const denominator = DENOMINATORS[c.per!];
  const keys = (denominator.keys === 'shared' ? denominatorKeys(denominator, def) : denominator.keys).map(q);
  const file = (dataset: string) => quoteLiteral(path.join(releaseDir, `${dataset}.parquet`));
  const sql = `SELECT DISTINCT ${keys.map((k) => `n.${k}`).join(', ')} FROM read_parquet(${file(c.metric)}) n
    ANTI JOIN (SELECT DISTINCT ${keys.join(', ')} FROM read_parquet(${file(denominator.dataset)})) d USING (${keys.join(', ')})
    WHERE ${c.where} AND ${c.shareWhere ?? 'TRUE'} AND ${c.years ?? 'TRUE'} ORDER BY ALL`;
  return (await connection.runAndReadAll(sql))
    .getRowObjectsJS()
    .map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])));
}
