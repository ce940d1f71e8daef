import type { Database } from '../duckdb/database.ts';
import { quoteIdent } from '../duckdb/sql-text.ts';
import { INTEGER_DIMENSIONS } from '../registry.ts';
import type { StoredDataset } from '../store/loader.ts';
import { type Filters, whereClauses, type YearRange } from './filters.ts';

// /v1/facets: for each dimension of a dataset, the values that have rows under the
// request's filters, with their row counts. Each dimension's counts apply every
// filter except its own (disjunctive faceting: a user who picked country=France still
// sees the other countries), so each dimension is its own GROUP BY; DuckDB runs them
// as one statement, on its own threads, over the served table's integer codes.

export interface FacetValue {
  /** As rows give it: a number for integer dimensions (year), else the text. */
  readonly value: string | number;
  readonly rows: number;
}

export interface Facets {
  /** Each dimension's values, most rows first, then by value; at most `max` each. */
  readonly values: Readonly<Record<string, readonly FacetValue[]>>;
  /** How many values each dimension has beyond the `max` listed. */
  readonly leftOut: Readonly<Record<string, number>>;
}

/** The one statement counting every dimension's values, or null when no dimension can match a row. */
export function facetsQuery(
  dataset: StoredDataset,
  filters: Filters,
  period: YearRange | undefined,
): { sql: string; params: number[] } | null {
  const params: number[] = [];
  const parts: string[] = [];
  for (const [i, dimension] of dataset.def.dimensions.entries()) {
    const others = new Map([...filters].filter(([d]) => d !== dimension));
    const clauses = whereClauses(dataset, others, dimension === 'year' ? undefined : period);
    if (!clauses) continue;
    const conditions = clauses.map((clause) => {
      let next = 0;
      return clause.sql.replace(/\?/g, () => `$${params.push(clause.params[next++]!)}`);
    });
    const column = quoteIdent(dimension);
    parts.push(
      `SELECT ${i} AS d, ${column}::INTEGER AS code, count(*)::INTEGER AS n FROM ${dataset.table}` +
        `${conditions.length ? ` WHERE ${conditions.join(' AND ')}` : ''} GROUP BY ${column}`,
    );
  }
  return parts.length ? { sql: parts.join(' UNION ALL '), params } : null;
}

/** Every dimension's facet values under `filters` and `period`, `max` per dimension. */
export async function countFacets(
  db: Database,
  dataset: StoredDataset,
  filters: Filters,
  period: YearRange | undefined,
  max: number,
  signal?: AbortSignal,
): Promise<Facets> {
  const { dimensions } = dataset.def;
  const found: FacetValue[][] = dimensions.map(() => []);
  const query = facetsQuery(dataset, filters, period);
  if (query) {
    const names = dimensions.map((d) => new Map([...(dataset.codes.get(d) ?? [])].map(([text, code]) => [code, text])));
    const result = await db.use((lease) => lease.queryInts(query.sql, query.params), signal);
    for (let c = 0; c < result.chunkCount; c++) {
      const chunk = result.getChunk(c);
      const [d, code, n] = [0, 1, 2].map((column) => chunk.getColumnVector(column));
      for (let row = 0; row < d!.itemCount; row++) {
        const dimension = d!.getItem(row) as number;
        const text = names[dimension]!.get(code!.getItem(row) as number);
        // A NULL code (a row without this dimension's value) is no value a filter can pick.
        if (text === undefined) continue;
        const value = INTEGER_DIMENSIONS.has(dimensions[dimension]!) ? Number(text) : text;
        found[dimension]!.push({ value, rows: n!.getItem(row) as number });
      }
    }
  }
  const values: Record<string, readonly FacetValue[]> = {};
  const leftOut: Record<string, number> = {};
  for (const [i, dimension] of dimensions.entries()) {
    const sorted = found[i]!.sort((a, b) => b.rows - a.rows || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
    values[dimension] = sorted.slice(0, max);
    leftOut[dimension] = Math.max(0, sorted.length - max);
  }
  return { values, leftOut };
}
