import { INTEGER_DIMENSIONS } from '../data/registry.ts';
import type { ServedDataset } from '../data/loader.ts';
import { quoteIdent } from '../data/sql-text.ts';

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

// How a kind of column turns requested values into a clause: the one table through
// which request values reach SQL, and only ever as bound parameters. String
// dimensions compare integer codes, so a value the release does not contain never
// reaches DuckDB at all: it simply matches nothing.
const COLUMN_KINDS = {
  integer: (column: string, values: readonly string[]) => {
    const years = [...new Set(values.map(Number))];
    return clauseIn(column, years);
  },
  coded: (column: string, values: readonly string[], codes: ReadonlyMap<string, number>) => {
    const known = [...new Set(values.flatMap((value) => codes.get(value) ?? []))];
    return known.length ? clauseIn(column, known) : null;
  },
};

function clauseIn(column: string, params: number[]): Clause {
  return { sql: `${quoteIdent(column)} IN (${params.map(() => '?').join(', ')})`, params };
}

/**
 * The WHERE clauses for a request, AND-ed together (values within one dimension
 * are OR-ed). Returns null when some filter can match no row of this release.
 */
export function whereClauses(dataset: ServedDataset, filters: Filters, period?: YearRange): Clause[] | null {
  const clauses: Clause[] = [];
  for (const [dimension, values] of filters) {
    const codes = dataset.codes.get(dimension);
    const clause = INTEGER_DIMENSIONS.has(dimension)
      ? COLUMN_KINDS.integer(dimension, values)
      : COLUMN_KINDS.coded(dimension, values, codes ?? new Map());
    if (!clause) return null;
    clauses.push(clause);
  }
  if (period) clauses.push({ sql: `${quoteIdent('year')} BETWEEN ? AND ?`, params: [period.from, period.to] });
  return clauses;
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
