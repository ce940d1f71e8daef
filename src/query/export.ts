import type { Database } from '../duckdb/database.ts';
import { quoteIdent, quoteLiteral } from '../duckdb/sql-text.ts';
import { type DatasetDef, INTEGER_DIMENSIONS } from '../registry.ts';
import type { StoredDataset } from '../store/loader.ts';
import { type Clause, type Filters, fileConditions, type YearRange } from './filters.ts';
import { readPage } from './page.ts';

// What /v1/export reads: every row a filter matches, in serving order, never all at once.

/**
 * The matching rows' rids in serving order, `batch` at a time. Each batch is a keyset
 * page of its own (a short query on a pooled connection), so a slow client never
 * holds a DuckDB connection while it reads, and stopping the walk stops the work.
 * `signal` interrupts the batch being read.
 */
export async function* matchingRids(
  db: Database,
  served: StoredDataset,
  clauses: readonly Clause[] | null,
  batch: number,
  signal?: AbortSignal,
): AsyncGenerator<readonly number[]> {
  let after = -1;
  for (;;) {
    const page = await readPage(db, served, clauses, batch, after, signal);
    if (page.rids.length > 0) yield page.rids;
    if (page.nextAfter === undefined) return;
    after = page.nextAfter;
  }
}

/**
 * Writes the rows of `source` (a release's normalized Parquet file) that the filters
 * match to `out` as Parquet, in serving order, with DuckDB's own COPY; the filter
 * values are bound parameters. `signal` drops it before it starts or interrupts it.
 */
export async function copyParquet(
  db: Database,
  def: DatasetDef,
  source: string,
  filters: Filters,
  period: YearRange | undefined,
  out: string,
  signal?: AbortSignal,
): Promise<void> {
  const params: (string | number)[] = [];
  const where = fileConditions(filters, period, params);
  const columns = [
    ...def.dimensions.map((d) => (INTEGER_DIMENSIONS.has(d) ? `${quoteIdent(d)}::INTEGER AS ${quoteIdent(d)}` : quoteIdent(d))),
    ...def.metrics.map((m) => `${quoteIdent(m)}::DOUBLE AS ${quoteIdent(m)}`),
  ];
  const sql = `COPY (SELECT ${columns.join(', ')} FROM read_parquet(${quoteLiteral(source)})${where.length ? ` WHERE ${where.join(' AND ')}` : ''}
    ORDER BY ${def.dimensions.map(quoteIdent).join(', ')}) TO ${quoteLiteral(out)} (FORMAT parquet, COMPRESSION zstd)`;
  // A sort of every matching row: DuckDB's memory-heavy work, one at a time.
  await db.exclusive((connection) => connection.run(sql, params).then(() => {}), signal);
}
