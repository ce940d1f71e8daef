import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent, quoteLiteral } from '../../src/duckdb/sql-text.ts';
import { type Expected, groupKey } from './derived-reference.ts';

// What /v1/aggregate's time-series parameters must give, computed by DuckDB from a
// release's Parquet files: sums as exact DECIMALs, the index's base by a join on the
// other dimensions with the base year's sums, the CAGR's years by joins with each
// year's sums (both read whatever the year filter says), `latest` by a window
// numbering each group's years from the newest. Each ratio divides DECIMAL sums once.

export interface SeriesCase {
  readonly name: string;
  readonly metric: 'ggr' | 'turnover' | 'country';
  /** The request's parameters after `metric=`. */
  readonly query: string;
  readonly groupBy: readonly string[];
  /** The sum measures, by metric: each one's key is `<metric>_sum`. */
  readonly metrics: readonly string[];
  /** SQL over the file's columns: every filter but the years. */
  readonly where: string;
  /** SQL on `year`: the years the filters keep. */
  readonly years?: string;
  readonly index?: number;
  readonly cagr?: readonly [number, number];
  readonly latest?: number;
}

const DECIMAL = 'DECIMAL(38,16)';
const q = quoteIdent;

/** Every group the answer must hold, by groupKey, with every value key and `rows`; and how many groups `latest` leaves out. */
export async function expectedSeries(
  connection: DuckDBConnection,
  releaseDir: string,
  c: SeriesCase,
): Promise<{ groups: Expected; cut: number }> {
  const file = quoteLiteral(path.join(releaseDir, `${c.metric}.parquet`));
  const dims = c.groupBy.map(q);
  const others = c.groupBy.filter((d) => d !== 'year').map(q);
  const by = (list: readonly string[]) => (list.length ? `GROUP BY ${list.join(', ')}` : '');
  const join = (table: string, on: readonly string[]) =>
    on.length ? `LEFT JOIN ${table} USING (${on.join(', ')})` : `CROSS JOIN ${table}`;
  const sums = (prefix: string) => c.metrics.map((m) => `sum(${q(m)}::${DECIMAL}) AS ${q(`${prefix}_${m}`)}`);
  const ctes = [
    `src AS (SELECT * FROM read_parquet(${file}) WHERE ${c.where})`,
    `g AS (SELECT ${[...dims, 'count(*) AS n', ...sums('s')].join(', ')} FROM src WHERE ${c.years ?? 'TRUE'} ${by(dims)})`,
  ];
  const joins: string[] = [];
  const select = [
    ...c.groupBy.map((d) => (d === 'year' ? `${q(d)}::INTEGER AS ${q(d)}` : `${q(d)}::VARCHAR AS ${q(d)}`)),
    'n::INTEGER AS "rows"',
  ];
  for (const m of c.metrics) {
    const key = `${m}_sum`;
    const s = q(`s_${m}`);
    select.push(`${s}::DOUBLE AS ${q(key)}`);
    if (c.index !== undefined) {
      const b = q(`b_${m}`);
      select.push(`CASE WHEN ${b} IS NULL OR ${b} = 0 THEN NULL ELSE ${s}::DOUBLE / ${b}::DOUBLE * 100 END AS ${q(`${key}_index`)}`);
    }
    if (c.cagr) {
      const [f, t] = [q(`f_${m}`), q(`t_${m}`)];
      const years = c.cagr[1] - c.cagr[0];
      select.push(
        `${f}::DOUBLE AS ${q(`${key}_from`)}`,
        `${t}::DOUBLE AS ${q(`${key}_to`)}`,
        `CASE WHEN ${f} > 0 AND ${t} >= 0 THEN pow(${t}::DOUBLE / ${f}::DOUBLE, 1 / ${years}) - 1 END AS ${q(`${key}_cagr`)}`,
      );
    }
  }
  if (c.index !== undefined) {
    // The base year's sums whatever the year filter says, joined on every other dimension.
    ctes.push(`b AS (SELECT ${[...others, ...sums('b')].join(', ')} FROM src WHERE year = ${c.index} ${by(others)})`);
    joins.push(join('b', others));
  }
  if (c.cagr) {
    ctes.push(
      `f AS (SELECT ${[...dims, ...sums('f')].join(', ')} FROM src WHERE year = ${c.cagr[0]} ${by(dims)})`,
      `t AS (SELECT ${[...dims, ...sums('t')].join(', ')} FROM src WHERE year = ${c.cagr[1]} ${by(dims)})`,
    );
    joins.push(join('f', dims), join('t', dims));
  }
  const rank =
    c.latest === undefined ? '1' : `row_number() OVER (${others.length ? `PARTITION BY ${others.join(', ')} ` : ''}ORDER BY year DESC)`;
  const sql = `WITH ${ctes.join(',\n')} SELECT ${select.join(', ')}, ${rank} AS rank FROM g ${joins.join(' ')}`;
  const groups: Expected = new Map();
  let cut = 0;
  for (const row of (await connection.runAndReadAll(sql)).getRowObjectsJS()) {
    if (c.latest !== undefined && Number(row.rank) > c.latest) {
      cut++;
      continue;
    }
    const dimensions = Object.fromEntries(c.groupBy.map((d) => [d, row[d]]));
    const values: Record<string, number | null> = {};
    for (const [name, value] of Object.entries(row))
      if (!c.groupBy.includes(name) && name !== 'rank') values[name] = value === null ? null : Number(value);
    groups.set(groupKey(dimensions, c.groupBy), values);
  }
  return { groups, cut };
}

/**
 * Equal to 1e-12 relative, or both null; a CAGR near 0 also to 1e-15 absolute: a
 * root of a ratio of two rounded sums cannot promise more relative to a tiny rate.
 */
export function near(served: number | null, want: number | null): boolean {
  if (served === null || want === null) return served === want;
  return served === want || Math.abs(served - want) <= 1e-12 * Math.max(Math.abs(served), Math.abs(want)) + 1e-15;
}
