import type { Database } from '../duckdb/database.ts';
import { quoteIdent } from '../duckdb/sql-text.ts';
import { TooManyGroupsError } from '../errors/index.ts';
import type { StoredDataset } from '../store/loader.ts';
import { levelShapes } from './aggregate-groups.ts';
import { type Clause, type Filters, whereClauses, type YearRange } from './filters.ts';

// How many groups an aggregate will have, subtotals included, known before any row is
// grouped: the size guard refuses a request that would have too many for the cost of
// a count. Most requests need no count at all, since the dictionaries bound them; the
// rest are counted exactly by DuckDB (on its own threads, not the event loop) over the
// served table, so the refusal names the true number.

/** What the count depends on: the grouping, its levels (with rollup) and the filters. */
export interface Grouping {
  readonly groupBy: readonly string[];
  readonly rollup: boolean;
  readonly filters: Filters;
}

/** Refuses (TooManyGroupsError) an aggregate that would have more than `max` groups, before any is computed. */
export async function checkGroupCount(
  db: Database,
  dataset: StoredDataset,
  plan: Grouping,
  period: YearRange | undefined,
  max: number,
  signal?: AbortSignal,
): Promise<void> {
  if (groupBound(dataset, plan, period) <= max) return;
  const count = await countGroups(db, dataset, plan, period, signal);
  if (count > max) throw new TooManyGroupsError(count, max);
}

/** At most how many groups: each level's product of the values its dimensions may take. */
export function groupBound(dataset: StoredDataset, plan: Grouping, period: YearRange | undefined): number {
  const { def, aggregates } = dataset;
  const choices = plan.groupBy.map((dimension) => {
    const dictionary = aggregates.dictionaries[def.dimensions.indexOf(dimension)]!.values;
    const inPeriod =
      dimension === 'year' && period
        ? dictionary.filter((year) => Number(year) >= period.from && Number(year) <= period.to).length
        : dictionary.length;
    return Math.min(inPeriod, plan.filters.get(dimension)?.length ?? Infinity);
  });
  return levelShapes(def, plan.groupBy, plan.rollup).reduce(
    (sum, { keep }) => sum + choices.slice(0, keep).reduce((product, n) => product * n, 1),
    0,
  );
}

/** The exact number of groups, counted by DuckDB: one SELECT DISTINCT per level. */
export async function countGroups(
  db: Database,
  dataset: StoredDataset,
  plan: Grouping,
  period: YearRange | undefined,
  signal?: AbortSignal,
): Promise<number> {
  const clauses = whereClauses(dataset, plan.filters, period);
  if (!clauses) return 0;
  const { sql, params } = groupCountQuery(dataset, plan, clauses);
  const result = await db.use((lease) => lease.queryInts(sql, params), signal);
  let count = 0;
  for (let c = 0; c < result.chunkCount; c++) {
    const column = result.getChunk(c).getColumnVector(0);
    for (let i = 0; i < column.itemCount; i++) count += Number(column.getItem(i));
  }
  return count;
}

/** The SQL that counts each level's groups, one row per level; exported for its table test. */
export function groupCountQuery(dataset: StoredDataset, plan: Grouping, clauses: readonly Clause[]): { sql: string; params: number[] } {
  const params: number[] = [];
  const where = (extra: readonly Clause[]) =>
    [...clauses, ...extra].map((clause) => {
      let next = 0;
      // push() returns the new length: the 1-based number of the value just added.
      return clause.sql.replace(/\?/g, () => `$${params.push(clause.params[next++]!)}`);
    });
  const totals = dataset.def.totals;
  const totalsCode = totals && dataset.codes.get(totals.dimension)?.get(totals.value);
  const parts = levelShapes(dataset.def, plan.groupBy, plan.rollup).map(({ keep, national }) => {
    const extra: Clause[] = [];
    if (national) {
      // No total rows in this release: the level has no groups.
      if (totalsCode === undefined) return 'SELECT 0';
      extra.push({ sql: `${quoteIdent(totals!.dimension)} = ?`, params: [totalsCode] });
    }
    const conditions = where(extra);
    const columns = ['1', ...plan.groupBy.slice(0, keep).map(quoteIdent)].join(', ');
    return `SELECT count(*) FROM (SELECT DISTINCT ${columns} FROM ${dataset.table}${conditions.length ? ` WHERE ${conditions.join(' AND ')}` : ''})`;
  });
  return { sql: parts.join('\nUNION ALL\n'), params };
}
