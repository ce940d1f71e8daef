import type { Database } from '../duckdb/database.ts';
import { quoteIdent, quoteLiteral } from '../duckdb/sql-text.ts';
import type { DatasetDef } from '../registry.ts';
import { codeBytes, type Dictionary, dictionary } from './dictionary.ts';
import { type Filters, fileConditions, type YearRange } from './filters.ts';
import { KeptTable } from './kept-table.ts';

// What /v1/revisions pages through: the rows of a financial dataset that differ
// between two releases' normalized Parquet files, computed once per walk by a FULL
// JOIN on the dimension tuple (as `etl diff` and the manifest's counts do). The diff
// is kept as a DuckDB table in page order, not in the JavaScript heap: DuckDB
// builds it on its own threads within DUCKDB_MEMORY_LIMIT, spilling to DUCKDB_TEMP_DIR
// past it, and each page reads only its own rows.

export const CHANGES = ['added', 'removed', 'changed'] as const;
export type Change = (typeof CHANGES)[number];

/**
 * One dimension of a diff's rows, dictionary-coded: `values` is the diff's own
 * dictionary (the same arrays in every batch read from it), `codes` index it.
 */
export interface RevisionDimension {
  readonly name: string;
  readonly values: readonly (string | number)[];
  /** Each value's JSON text. */
  readonly json: readonly string[];
  readonly codes: Uint32Array;
}

/** Rows of a diff, as a page renders them. */
export interface RevisedRows {
  readonly count: number;
  /** In the registry's dimension order; rows are sorted by them. */
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

/** Where kept diffs live: a schema of their own in DuckDB's default in-memory catalog. */
const SCHEMA = 'revisions';
let tables = 0;

/** A computed diff: `count` rows in a DuckDB table, numbered 0… in page order. */
export class RevisionDiff extends KeptTable<RevisedRows> {
  private constructor(
    db: Database,
    private readonly def: DatasetDef,
    table: string,
    count: number,
    private readonly dictionaries: readonly Dictionary[],
  ) {
    super(db, table, count);
  }

  /**
   * Runs the FULL JOIN into a table, then sorts that into the diff's own table, whose
   * row ids are then the page order. Two statements, each spilling on its own: the
   * join and the sort in one ran out of memory where each alone fits. One diff at a
   * time (Database.exclusive). `signal` drops it before it starts or interrupts it; its
   * tables are dropped either way.
   */
  static async compute(db: Database, query: RevisionQuery, signal?: AbortSignal): Promise<RevisionDiff> {
    const id = ++tables;
    const table = `${SCHEMA}.${quoteIdent(`diff_${id}`)}`;
    const joined = `${SCHEMA}.${quoteIdent(`diff_${id}_joined`)}`;
    const { sql, params } = revisionsQuery(query);
    const { def } = query;
    const dims = def.dimensions.map(quoteIdent);
    const { rows, dictionaries } = await db.exclusive(async (connection) => {
      await connection.run(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`);
      try {
        await connection.run(`CREATE TABLE ${joined} AS ${sql}`, params);
        // An interrupt that came between two statements is not lost.
        signal?.throwIfAborted();
        const lists = def.dimensions.map((d) => `list(DISTINCT ${quoteIdent(d)} ORDER BY ${quoteIdent(d)})`);
        const [row] = (await connection.runAndReadAll(`SELECT count(*), ${lists.join(', ')} FROM ${joined}`)).getRows();
        const dictionaries = def.dimensions.map((name, d) => dictionary(name, row![d + 1]));
        signal?.throwIfAborted();
        // Kept as each dimension's code and NaN for an absent value: a batch read from it is numbers only, with no validity mask to test per value.
        const values = [...def.metrics.map((m) => `before_${m}`), ...def.metrics.map((m) => `after_${m}`)].map(
          (column) => `coalesce(${quoteIdent(column)}, 'NaN'::DOUBLE) AS ${quoteIdent(column)}`,
        );
        const columns = [...dictionaries.map((d) => `${d.code} AS ${quoteIdent(d.name)}`), quoteIdent('change'), ...values];
        await connection.run(`CREATE TABLE ${table} AS SELECT ${columns.join(', ')} FROM ${joined} ORDER BY ${dims.join(', ')}`);
        return { rows: Number(row![0]), dictionaries };
      } catch (err) {
        await connection.run(`DROP TABLE IF EXISTS ${table}`);
        throw err;
      } finally {
        await connection.run(`DROP TABLE IF EXISTS ${joined}`);
      }
    }, signal);
    return new RevisionDiff(db, def, table, rows, dictionaries);
  }

  /**
   * About the bytes its table holds, in DuckDB's memory or spilled: what REVISIONS_KEEP_BYTES
   * bounds. A row is each dimension's code (1, 2 or 4 bytes, by its dictionary's size),
   * its change, and a double per metric before and after.
   */
  get bytes(): number {
    return this.count * (codeBytes(this.dictionaries) + 1 + 16 * this.def.metrics.length);
  }

  /**
   * Rows [start, end) in page order. The table holds codes into the diff's
   * dictionaries, so what crosses into JavaScript is numbers read straight into typed
   * arrays, and no string per value.
   */
  async rows(start: number, end: number): Promise<RevisedRows> {
    const { def, dictionaries } = this;
    const count = Math.max(0, end - start);
    const rows: RevisedRows = {
      count,
      dimensions: dictionaries.map(({ name, values, json }) => ({ name, values, json, codes: new Uint32Array(count) })),
      change: new Uint8Array(count),
      before: def.metrics.map(() => new Float64Array(count)),
      after: def.metrics.map(() => new Float64Array(count)),
    };
    if (count === 0) return rows;
    const columns = [...def.dimensions, 'change', ...def.metrics.map((m) => `before_${m}`), ...def.metrics.map((m) => `after_${m}`)];
    await this.read(columns, start, end, [...rows.dimensions.map((d) => d.codes), rows.change, ...rows.before, ...rows.after]);
    return rows;
  }
}

/**
 * The SELECT of the diff's rows, unsorted, and its parameters: each filter
 * value travels as a bound parameter, and applies to both releases before the join,
 * so the join reads only matching rows.
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
  const values = [
    ...def.metrics.map((m) => `a.${quoteIdent(m)}::DOUBLE AS ${quoteIdent(`before_${m}`)}`),
    ...def.metrics.map((m) => `b.${quoteIdent(m)}::DOUBLE AS ${quoteIdent(`after_${m}`)}`),
  ];
  const sql = `
    SELECT * FROM (
      SELECT ${dims.join(', ')}, (${kind})::UTINYINT AS change, ${values.join(', ')}
      FROM (${side(from, 'in_a')}) a FULL JOIN (${side(to, 'in_b')}) b USING (${dims.join(', ')})
      WHERE a.in_a IS NULL OR b.in_b IS NULL OR ${differs}
    ) WHERE change IN (${kinds.join(', ')})`;
  return { sql, params };
}
