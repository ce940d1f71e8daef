import type { Database } from '../duckdb/database.ts';
import { quoteIdent, quoteLiteral } from '../duckdb/sql-text.ts';
import type { DatasetDef } from '../registry.ts';
import { fileConditions, type Filters, type YearRange } from './filters.ts';

// What /v1/revisions pages through: the rows of a financial dataset that differ
// between two releases' normalized Parquet files, computed once per walk by a FULL
// JOIN on the dimension tuple (as `etl diff` and the manifest's counts do), and kept.

export const CHANGES = ['added', 'removed', 'changed'] as const;
export type Change = (typeof CHANGES)[number];

/** One dimension of the kept rows, dictionary-coded. */
export interface RevisionDimension {
  readonly name: string;
  readonly values: readonly (string | number)[];
  /** Each value's JSON text. */
  readonly json: readonly string[];
  readonly codes: Uint32Array;
}

export interface RevisionResult {
  readonly count: number;
  /** In the registry's dimension order; rows are sorted by them, which is the keyset. */
  readonly dimensions: readonly RevisionDimension[];
  /** Index into CHANGES per row. */
  readonly change: Uint8Array;
  /** Per metric, the value in `from` and in `to`; NaN where the row is absent. */
  readonly before: readonly Float64Array[];
  readonly after: readonly Float64Array[];
}

export interface RevisionQuery {
  readonly def: DatasetDef;
  /** The two releases' Parquet files of `def`'s dataset. */
  readonly from: string;
  readonly to: string;
  readonly filters: Filters;
  readonly period?: YearRange;
  /** Only these kinds of change; all when undefined. */
  readonly changes?: readonly Change[];
}

/** Bytes a kept result holds, for the LRU that keeps them. */
export function revisionBytes(result: RevisionResult): number {
  let bytes = result.count * (1 + 4 * result.dimensions.length + 16 * result.before.length);
  for (const dimension of result.dimensions) for (const json of dimension.json) bytes += 2 * json.length + 32;
  return bytes;
}

/**
 * The SQL and its parameters: each filter value travels as a bound parameter, and
 * applies to both releases before the join, so the join reads only matching rows.
 */
export function revisionsQuery({ def, from, to, filters, period, changes }: RevisionQuery): { sql: string; params: (string | number)[] } {
  const params: (string | number)[] = [];
  const where = fileConditions(filters, period, params);
  const dims = def.dimensions.map(quoteIdent);
  const side = (file: string, present: string) =>
    `SELECT ${[...dims, ...def.metrics.map(quoteIdent)].join(', ')}, true AS ${present} FROM read_parquet(${quoteLiteral(file)})${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`;
  const differs = def.metrics.map((m) => `a.${quoteIdent(m)} IS DISTINCT FROM b.${quoteIdent(m)}`).join(' OR ') || 'false';
  const kind = `CASE WHEN a.in_a IS NULL THEN 0 WHEN b.in_b IS NULL THEN 1 ELSE 2 END`;
  const kinds = (changes ?? CHANGES).map((c) => CHANGES.indexOf(c));
  const sql = `
    SELECT * FROM (
      SELECT ${dims.join(', ')}, (${kind})::UTINYINT AS change,
             ${[...def.metrics.map((m) => `a.${quoteIdent(m)}::DOUBLE`), ...def.metrics.map((m) => `b.${quoteIdent(m)}::DOUBLE`)].join(', ')}
      FROM (${side(from, 'in_a')}) a FULL JOIN (${side(to, 'in_b')}) b USING (${dims.join(', ')})
      WHERE a.in_a IS NULL OR b.in_b IS NULL OR ${differs}
    ) WHERE change IN (${kinds.join(', ')})
    ORDER BY ${dims.join(', ')}`;
  return { sql, params };
}

/** Runs the FULL JOIN on a pooled connection and keeps its rows in columns. */
export async function computeRevisions(db: Database, query: RevisionQuery): Promise<RevisionResult> {
  const { def } = query;
  const { sql, params } = revisionsQuery(query);
  const read = await db.use(async (lease) => (await lease.connection.runAndReadAll(sql, params)).getColumns());
  // DuckDB gives no columns at all for a result without rows.
  const columns = read.length > 0 ? read : Array.from({ length: def.dimensions.length + 1 + 2 * def.metrics.length }, () => []);
  const count = columns[0]!.length;
  const dimensions = def.dimensions.map((name, d) => dictionaryCode(name, columns[d]! as (string | number)[]));
  const m = def.metrics.length;
  const floats = (c: number) => Float64Array.from(columns[c]! as (number | null)[], (x) => (x === null ? NaN : x));
  const first = def.dimensions.length + 1;
  return {
    count,
    dimensions,
    change: Uint8Array.from(columns[def.dimensions.length]! as number[]),
    before: def.metrics.map((_, i) => floats(first + i)),
    after: def.metrics.map((_, i) => floats(first + m + i)),
  };
}

function dictionaryCode(name: string, column: readonly (string | number)[]): RevisionDimension {
  const values = [...new Set(column)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const code = new Map(values.map((value, i) => [value, i]));
  return { name, values, json: values.map((value) => JSON.stringify(value)), codes: Uint32Array.from(column, (value) => code.get(value)!) };
}
