import type { Database } from '../duckdb/database.ts';
import type { StoredDataset } from '../store/loader.ts';
import { type Clause, pageQuery } from './filters.ts';

export interface Page {
  /** The page's rows, in serving order. */
  readonly rids: readonly number[];
  /** `rid` of the page's last row, when another page follows. */
  readonly nextAfter: number | undefined;
}

const EMPTY: Page = { rids: [], nextAfter: undefined };

/** Finds one keyset page; `clauses === null` means the filters can match nothing. */
export async function readPage(
  db: Database,
  dataset: StoredDataset,
  clauses: readonly Clause[] | null,
  limit: number,
  afterRid: number,
  signal?: AbortSignal,
): Promise<Page> {
  if (!clauses) return EMPTY;
  const { sql, params } = pageQuery(dataset.table, clauses, limit, afterRid);
  const result = await db.use((lease) => lease.queryInts(sql, params), signal);
  const rids: number[] = [];
  for (let c = 0; c < result.chunkCount; c++) {
    const column = result.getChunk(c).getColumnVector(0);
    for (let i = 0; i < column.itemCount; i++) rids.push(column.getItem(i) as number);
  }
  checkKeysetOrder(rids, afterRid, dataset.table);
  if (rids.length <= limit) return { rids, nextAfter: undefined };
  rids.length = limit;
  return { rids, nextAfter: rids[limit - 1] };
}

/**
 * A page's rids must come after the cursor and strictly increase: the LIMIT
 * without ORDER BY relies on DuckDB scanning in storage (= rid) order. Should that
 * ever break, the request fails loudly (a logged 500) instead of a cursor silently
 * skipping or repeating rows.
 */
export function checkKeysetOrder(rids: readonly number[], afterRid: number, table: string): void {
  let previous = afterRid;
  for (const rid of rids) {
    if (rid <= previous) throw new Error(`${table}: page query returned rid ${rid} after ${previous}; rows are not scanned in rid order`);
    previous = rid;
  }
}
