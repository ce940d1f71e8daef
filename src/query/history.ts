import type { Database } from '../duckdb/database.ts';
import { quoteIdent, quoteLiteral } from '../duckdb/sql-text.ts';
import { type DatasetDef, INTEGER_DIMENSIONS } from '../registry.ts';
import type { HistoryColumn, HistoryRows } from '../render/history.ts';
import { codeBytes, type Dictionary, dictionary } from './dictionary.ts';
import { type Filters, fileConditions, type YearRange } from './filters.ts';
import { KeptTable } from './kept-table.ts';

// What /v1/history pages through: each observation's values release after release,
// computed once per walk by one statement over every published release's Parquet
// file (a release's ordinal beside each row, window functions over it per
// observation), into a DuckDB table in page order, as a revisions diff is kept
// (query/revisions.ts). Validity is computed over every published release, so a
// value's `valid_from` and `valid_to` never depend on the range asked for: histories
// fetched in chunks of releases join back exactly.

export const OUTPUTS = ['changes', 'first', 'all'] as const;
export type Output = (typeof OUTPUTS)[number];
export const SHAPES = ['long', 'wide'] as const;
export type Shape = (typeof SHAPES)[number];
/** What happened to an observation in a release, by its code in the kept table. */
export const HISTORY_CHANGES = ['added', 'changed', 'removed'] as const;

export interface HistoryQuery {
  readonly def: DatasetDef;
  /** Every published release, oldest first: its id and its Parquet file of `def`'s dataset. */
  readonly releases: readonly { readonly id: string; readonly file: string }[];
  /** The ordinals, in `releases`, of the first and last release asked for. */
  readonly from: number;
  readonly to: number;
  readonly filters: Filters;
  readonly period?: YearRange;
  readonly output: Output;
  readonly shape: Shape;
}

/** Where kept histories live: a schema of their own in DuckDB's default in-memory catalog. */
const SCHEMA = 'history';
let tables = 0;

/** Bytes a kept value other than a dimension's code takes: a release's ordinal, a change's code, a value. */
const BYTES = { release: 4, change: 1, value: 8 } as const;

/** A computed history: `count` rows in a DuckDB table, numbered 0… in page order. */
export class HistoryTable extends KeptTable<HistoryRows> {
  private constructor(
    db: Database,
    table: string,
    count: number,
    readonly columns: readonly HistoryColumn[],
    private readonly ids: readonly string[],
    private readonly dictionaries: readonly Dictionary[],
  ) {
    super(db, table, count);
  }

  /**
   * Runs the query into a table, then sorts that into the history's own table, each
   * dimension coded against the history's dictionary of its values, as a diff is
   * (query/revisions.ts): a page then reads numbers, and no string per value, which
   * was two thirds of a whole CSV's CPU. One at a time (Database.exclusive); `signal`
   * drops it before it starts or interrupts it; its tables are dropped either way.
   */
  static async compute(db: Database, query: HistoryQuery, signal?: AbortSignal): Promise<HistoryTable> {
    const id = ++tables;
    const table = `${SCHEMA}.${quoteIdent(`history_${id}`)}`;
    const computed = `${SCHEMA}.${quoteIdent(`history_${id}_computed`)}`;
    const { sql, params, columns, order } = historyQuery(query);
    const { dimensions } = query.def;
    const { count, dictionaries } = await db.exclusive(async (connection) => {
      await connection.run(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`);
      try {
        await connection.run(`CREATE TABLE ${computed} AS ${sql}`, params);
        signal?.throwIfAborted();
        const lists = dimensions.map((d) => `list(DISTINCT ${quoteIdent(d)} ORDER BY ${quoteIdent(d)})`);
        const [row] = (await connection.runAndReadAll(`SELECT count(*), ${lists.join(', ')} FROM ${computed}`)).getRows();
        const dictionaries = dimensions.map((name, d) => dictionary(name, row![d + 1]));
        signal?.throwIfAborted();
        // Numbers only, as a diff keeps them: a release with none is the code after the last release, a value with none NaN.
        const coded = columns.map((column) => {
          const name = quoteIdent(column.name);
          if (column.role === 'dimension') return `${dictionaries.find((d) => d.name === column.name)!.code} AS ${name}`;
          if (column.role === 'release') return `coalesce(${name}, ${query.releases.length}) AS ${name}`;
          return column.role === 'value' ? `coalesce(${name}, 'NaN'::DOUBLE) AS ${name}` : name;
        });
        // Sorted by the values, not the codes: a dictionary is sorted as DuckDB sorts its values, so the order is the same.
        await connection.run(`CREATE TABLE ${table} AS SELECT ${coded.join(', ')} FROM ${computed} ORDER BY ${order}`);
        return { count: Number(row![0]), dictionaries };
      } catch (err) {
        await connection.run(`DROP TABLE IF EXISTS ${table}`);
        throw err;
      } finally {
        await connection.run(`DROP TABLE IF EXISTS ${computed}`);
      }
    }, signal);
    return new HistoryTable(
      db,
      table,
      count,
      columns,
      query.releases.map((r) => r.id),
      dictionaries,
    );
  }

  /** About the bytes its table holds: each dimension's code (1, 2 or 4 bytes, by its dictionary's size), then its other columns. */
  get bytes(): number {
    return this.count * this.columns.reduce((sum, c) => sum + (c.role === 'dimension' ? 0 : BYTES[c.role]), codeBytes(this.dictionaries));
  }

  /** Rows [start, end) in page order: codes into a dimension's dictionary, the releases' ids (then null) and the changes' names; doubles. */
  async rows(start: number, end: number): Promise<HistoryRows> {
    const { columns, dictionaries } = this;
    const count = Math.max(0, end - start);
    const releases = [...this.ids, null];
    const rows: HistoryRows = {
      count,
      columns: columns.map(({ name, role, type }) => {
        if (type === 'double') return { name, role, type, doubles: new Float64Array(count) };
        if (role === 'change') return { name, role, type, values: HISTORY_CHANGES, codes: new Uint8Array(count) };
        const values = role === 'release' ? releases : dictionaries.find((d) => d.name === name)!.values;
        return { name, role, type, values, codes: new Uint32Array(count) };
      }),
    };
    if (count === 0) return rows;
    const targets = rows.columns.map((column) => (column.type === 'double' ? column.doubles : column.codes));
    await this.read(
      columns.map((c) => c.name),
      start,
      end,
      targets,
    );
    return rows;
  }
}

/**
 * The SELECT of a history's rows, unsorted, with its parameters, its columns and the
 * ORDER BY of its page order (the dimensions, then the release). Each filter value
 * travels as a bound parameter and applies to every release's file as it is read.
 */
export function historyQuery(query: HistoryQuery): {
  sql: string;
  params: (string | number)[];
  columns: HistoryColumn[];
  order: string;
} {
  const { def, releases, from, to, filters, period, output, shape } = query;
  const params: (string | number)[] = [];
  const where = fileConditions(filters, period, params);
  const dims = def.dimensions.map(quoteIdent);
  const metrics = def.metrics.map(quoteIdent);
  const dimensionColumns = def.dimensions.map(
    (name): HistoryColumn => ({ name, role: 'dimension', type: INTEGER_DIMENSIONS.has(name) ? 'integer' : 'text' }),
  );
  const valueColumns = def.metrics.map((name): HistoryColumn => ({ name, role: 'value', type: 'double' }));
  const release = (name: string): HistoryColumn => ({ name, role: 'release', type: 'text' });
  // Every published release's rows, each with its release's ordinal (`seq`).
  const vintages = releases
    .map(
      ({ file }, seq) =>
        `SELECT ${[...dims, ...metrics.map((m) => `${m}::DOUBLE AS ${m}`)].join(', ')}, ${seq}::INTEGER AS seq FROM read_parquet(${quoteLiteral(file)})${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`,
    )
    .join(' UNION ALL ');
  const observation = `PARTITION BY ${dims.join(', ')} ORDER BY seq`;
  const inRange = `seq BETWEEN ${from} AND ${to}`;
  const byObservation = (last: string) => [...dims, last].join(', ');
  if (output === 'all' && shape === 'wide') {
    const inRangeIds = releases.slice(from, to + 1);
    const pivot = def.metrics.flatMap((m) =>
      inRangeIds.map(({ id }, i) => `max(CASE WHEN seq = ${from + i} THEN ${quoteIdent(m)} END) AS ${quoteIdent(`${m}_${id}`)}`),
    );
    return {
      sql: `SELECT ${[...dims, ...pivot].join(', ')} FROM (${vintages}) WHERE ${inRange} GROUP BY ALL`,
      params,
      columns: [
        ...dimensionColumns,
        ...def.metrics.flatMap((m) => inRangeIds.map(({ id }): HistoryColumn => ({ name: `${m}_${id}`, role: 'value', type: 'double' }))),
      ],
      order: dims.join(', '),
    };
  }
  if (output === 'all') {
    return {
      sql: `SELECT ${[...dims, 'seq AS release', ...metrics].join(', ')} FROM (${vintages}) WHERE ${inRange}`,
      params,
      columns: [...dimensionColumns, release('release'), ...valueColumns],
      order: byObservation('release'),
    };
  }
  if (output === 'first') {
    // The observation's first row ever, kept when it has a row in the range.
    return {
      sql: `SELECT ${[...dims, 'seq AS first_release', ...metrics].join(', ')} FROM (
        SELECT *, row_number() OVER (${observation}) AS nth, bool_or(${inRange}) OVER (PARTITION BY ${dims.join(', ')}) AS present
        FROM (${vintages})
      ) WHERE nth = 1 AND present`,
      params,
      columns: [...dimensionColumns, release('first_release'), ...valueColumns],
      order: byObservation('first_release'),
    };
  }
  // changes: a version starts where a row has no row in the release before it (added)
  // or differs from it (changed), and where a row has none in the release after it
  // (removed, there); it holds until the observation's next version.
  const last = releases.length - 1;
  const differs = def.metrics.map((m) => `${quoteIdent(m)} IS DISTINCT FROM ${quoteIdent(`prev_${m}`)}`).join(' OR ') || 'false';
  const [ADDED, CHANGED, REMOVED] = (['added', 'changed', 'removed'] as const).map((c) => HISTORY_CHANGES.indexOf(c));
  const sql = `
    WITH vintage_rows AS (
      SELECT *, lag(seq) OVER o AS prev_seq, lead(seq) OVER o AS next_seq,
        ${def.metrics.map((m) => `lag(${quoteIdent(m)}) OVER o AS ${quoteIdent(`prev_${m}`)}`).join(', ')}
      FROM (${vintages}) WINDOW o AS (${observation})
    ), versions AS (
      SELECT ${dims.join(', ')}, seq AS valid_from,
        (CASE WHEN prev_seq IS NULL OR prev_seq < seq - 1 THEN ${ADDED} ELSE ${CHANGED} END)::UTINYINT AS change, ${metrics.join(', ')}
      FROM vintage_rows WHERE prev_seq IS NULL OR prev_seq < seq - 1 OR ${differs}
      UNION ALL
      SELECT ${dims.join(', ')}, seq + 1, ${REMOVED}::UTINYINT, ${metrics.map((m) => `NULL::DOUBLE AS ${m}`).join(', ')}
      FROM vintage_rows WHERE (next_seq IS NULL AND seq < ${last}) OR next_seq > seq + 1
    )
    SELECT ${[...dims, 'change', 'valid_from', 'valid_to', ...metrics].join(', ')} FROM (
      SELECT *, lead(valid_from) OVER (PARTITION BY ${dims.join(', ')} ORDER BY valid_from) AS valid_to FROM versions
    )
    -- A value whose validity overlaps the range; a removal in the range (it holds no value after it).
    WHERE valid_from <= ${to} AND (CASE WHEN change = ${REMOVED} THEN valid_from >= ${from} ELSE valid_to IS NULL OR valid_to > ${from} END)`;
  return {
    sql,
    params,
    columns: [
      ...dimensionColumns,
      { name: 'change', role: 'change', type: 'text' },
      release('valid_from'),
      release('valid_to'),
      ...valueColumns,
    ],
    order: byObservation('valid_from'),
  };
}
