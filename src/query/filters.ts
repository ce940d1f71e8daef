import { quoteIdent } from '../duckdb/sql-text.ts';
import { INTEGER_DIMENSIONS } from '../registry.ts';
import type { StoredDataset } from '../store/loader.ts';

/** Requested filters: dimension → values, both already validated against the registry. */
export type Filters = ReadonlyMap<string, readonly string[]>;

/** Inclusive range of calendar years, from the `period` parameter. */
export interface YearRange {
  readonly from: number;
  readonly to: number;
}

export interface Clause {
  /** SQL with `?` where each parameter goes; numbered when the page query is assembled. */
  readonly sql: string;
  readonly params: readonly number[];
}

// The one place request values reach SQL, and only ever as bound parameters: each
// value is looked up in what the release holds for its dimension (the code of a text
// value, the year itself), so a value the release does not hold never reaches DuckDB
// at all. It matches nothing, and no client can make a new statement per request by
// inventing values.
function clauseFor(column: string, values: readonly string[], held: ReadonlyMap<string, number>): Clause | null {
  const known = [...new Set(values.flatMap((value) => held.get(value) ?? []))];
  return known.length ? clauseIn(column, known) : null;
}

function clauseIn(column: string, params: number[]): Clause {
  return { sql: `${quoteIdent(column)} IN (${params.map(() => '?').join(', ')})`, params };
}

/**
 * The WHERE clauses for a request, AND-ed together (values within one dimension
 * are OR-ed). Returns null when some filter can match no row of this release.
 */
export function whereClauses(dataset: StoredDataset, filters: Filters, period?: YearRange): Clause[] | null {
  const clauses: Clause[] = [];
  for (const [dimension, values] of filters) {
    const clause = clauseFor(dimension, values, dataset.codes.get(dimension) ?? new Map());
    if (!clause) return null;
    clauses.push(clause);
  }
  if (period) clauses.push({ sql: `${quoteIdent('year')} BETWEEN ? AND ?`, params: [period.from, period.to] });
  return clauses;
}

/**
 * The same filters as conditions on a release's Parquet file, whose columns hold the
 * values themselves (revisions, filtered Parquet exports): each value is a bound
 * parameter appended to `params`, numbered `$n` in the text.
 */
export function fileConditions(filters: Filters, period: YearRange | undefined, params: (string | number)[]): string[] {
  const conditions: string[] = [];
  for (const [dimension, values] of filters) {
    const integer = INTEGER_DIMENSIONS.has(dimension);
    conditions.push(
      `${quoteIdent(dimension)} IN (${values.map((value) => `$${params.push(integer ? Number(value) : value)}`).join(', ')})`,
    );
  }
  if (period) conditions.push(`${quoteIdent('year')} BETWEEN $${params.push(period.from)} AND $${params.push(period.to)}`);
  return conditions;
}

/**
 * The `rid`s of one page plus one more (which says whether another page follows).
 *
 * The LIMIT relies on the table being stored in `rid` order and scans returning
 * insertion order: DuckDB stops at the first limit+1 matching rows instead of
 * sorting every match, and `rid > $2` lets it skip row groups before the cursor.
 */
export function pageQuery(table: string, clauses: readonly Clause[], limit: number, afterRid: number): { sql: string; params: number[] } {
  const params = [limit, afterRid];
  const conditions = ['rid > $2'];
  for (const clause of clauses) {
    let next = 0;
    // push() returns the new length, which is the 1-based number of the value just added.
    conditions.push(clause.sql.replace(/\?/g, () => `$${params.push(clause.params[next++]!)}`));
  }
  return { sql: `SELECT rid FROM ${table} WHERE ${conditions.join(' AND ')} LIMIT $1 + 1`, params };
}
