import type { Database } from '../data/duckdb.ts';
import type { ServedDataset } from '../data/loader.ts';
import { pageQuery, type Clause } from './filters.ts';

export interface Page {
  /** The page's rows as JSON objects joined by commas, ready to sit inside `[...]`. */
  readonly rowsJson: string;
  readonly rowCount: number;
  /** `rid` of the page's last row, when another page follows. */
  readonly nextAfter: number | undefined;
}

const EMPTY: Page = { rowsJson: '', rowCount: 0, nextAfter: undefined };

/** Reads one page; `clauses === null` means the filters can match nothing. */
export async function readPage(db: Database, dataset: ServedDataset, clauses: readonly Clause[] | null, limit: number, afterRid: number): Promise<Page> {
  if (!clauses) return EMPTY;
  const { sql, params } = pageQuery(dataset.table, clauses, limit, afterRid);
  const reader = await db.use((lease) => lease.queryInts(sql, params));
  const [body, lastRid, fetched] = reader.getRows()[0]!;
  const count = Number(fetched);
  if (count === 0) return EMPTY;
  return {
    rowsJson: String(body),
    rowCount: Math.min(count, limit),
    nextAfter: count > limit ? Number(lastRid) : undefined,
  };
}
