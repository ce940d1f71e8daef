import type { DuckDBConnection } from '@duckdb/node-api';
import type { Logger } from 'pino';
import { SERVING_CATALOG } from '../duckdb/database.ts';
import { quoteIdent, quoteLiteral } from '../duckdb/sql-text.ts';
import { type DatasetDef, INTEGER_DIMENSIONS } from '../registry.ts';
import { type AggregateTables, buildAggregateTables } from './aggregate-tables.ts';
import { type CodeArray, ColumnStore, codeArray, type Dictionary, type DimensionInput, type MetricColumn } from './column-store.ts';
import { DatasetError } from './dataset-error.ts';
import { decimalScale } from './decimals.ts';
import { columnProblems, describeParquet, refuseProblems, valueProblems } from './parquet-checks.ts';
import { Turns } from './slices.ts';

/** A dataset of a release as the store holds it: its DuckDB table and its columns. */
export interface StoredDataset {
  readonly def: DatasetDef;
  /** Quoted, schema-qualified table name; comes from the registry, never from a request. */
  readonly table: string;
  /** Every row's dimension codes and metrics, by `rid`: what each output format reads. */
  readonly store: ColumnStore;
  /**
   * For each dimension, a value as requested (canonical text) → what its column holds
   * for it: the code of a text value, the integer itself for `year`. Values the release
   * does not hold are absent.
   */
  readonly codes: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /** The rows and their rollups as aggregates read them. */
  readonly aggregates: AggregateTables;
}

/** A dataset just loaded, and a sample of its rows as DuckDB's to_json writes them, for the caller to check what it renders from the store against. */
export interface LoadedDataset {
  readonly dataset: StoredDataset;
  readonly samples: ReadonlyArray<readonly [rid: number, json: string]>;
}

/** One dataset's file of a release, and the row count its manifest gives. */
export interface DatasetFile {
  readonly def: DatasetDef;
  readonly file: string;
  readonly rows: number;
}

/** Fits a fused code in 16 bits; docs/performance.md has the alternatives measured. */
const MAX_COMBINATIONS = 0x10000;
/** Rows per dataset that the load-time self-check renders both ways. */
const SELF_CHECK_ROWS = 1000;

/** The schema holding a release's tables and types. */
const releaseSchema = (id: string) => `${SERVING_CATALOG}.${quoteIdent(`r${id.replace('-', '_')}`)}`;

/**
 * Copies a release's Parquet files into native DuckDB tables laid out for serving
 * (rows sorted in serving order and numbered by `rid`, the keyset; string
 * dimensions stored as small integer codes, which filters compare) and reads them
 * back, in `rid` order, into a ColumnStore per dataset.
 *
 * The release's schema is dropped first and again on failure, so loading an id
 * that is already loaded replaces it and a failed load leaves nothing behind. The
 * connection's settings are left alone: DuckDB's are instance-wide, and serving
 * connections share them.
 *
 * `signal` stops the load: the caller interrupts the connection's statement, and the
 * work between statements stops at its next slice; it then rejects with the signal's
 * reason, its schema dropped as for any failure.
 */
export async function loadTables(
  connection: DuckDBConnection,
  id: string,
  files: readonly DatasetFile[],
  log: Logger,
  signal?: AbortSignal,
): Promise<ReadonlyMap<string, LoadedDataset>> {
  const schema = releaseSchema(id);
  await connection.run(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await connection.run(`CREATE SCHEMA ${schema}`);
  try {
    const datasets = new Map<string, LoadedDataset>();
    for (const { def, file, rows } of files) {
      const started = performance.now();
      const loaded = await loadDataset(connection, schema, def, file, rows, new Turns(signal));
      datasets.set(def.name, loaded);
      // Each dataset's tables compressed before the next one is written, so the
      // uncompressed copies never add up.
      await compress(connection, log, signal);
      const { store } = loaded.dataset;
      log.info(
        {
          dataset: def.name,
          rows: store.rowCount,
          segments: store.segments.map((s) => s.combinations),
          bytesPerRow: store.bytesPerRow,
          ms: Math.round(performance.now() - started),
        },
        'dataset loaded',
      );
    }
    return datasets;
  } catch (err) {
    // The load's own error is the one to report; a failed clean-up is logged beside it.
    await dropTables(connection, id).catch((dropErr: Error) => log.error({ err: dropErr, schema }, "cannot drop the failed load's schema"));
    throw err;
  }
}

/** Drops a release's tables; the caller makes sure no request can still read them. */
export async function dropTables(connection: DuckDBConnection, id: string): Promise<void> {
  await connection.run(`DROP SCHEMA IF EXISTS ${releaseSchema(id)} CASCADE`);
}

/** Compresses the new tables; without it they stay as written, many times larger, but serve the same. */
async function compress(connection: DuckDBConnection, log: Logger, signal: AbortSignal | undefined): Promise<void> {
  await connection.run(`CHECKPOINT ${SERVING_CATALOG}`).catch((err: Error) => {
    // Interrupted because the load is stopped: no table will be served uncompressed.
    signal?.throwIfAborted();
    log.warn({ err }, 'checkpoint failed: the served tables stay uncompressed and take more memory');
  });
}

async function loadDataset(
  connection: DuckDBConnection,
  schema: string,
  def: DatasetDef,
  file: string,
  expectedRows: number,
  turns: Turns,
): Promise<LoadedDataset> {
  const source = `read_parquet(${quoteLiteral(file)})`;
  // A turn before each long statement: one the caller's interrupt found idle would otherwise run whole.
  await turns.turn();
  refuseProblems(columnProblems(def, await describeParquet(connection, file), file));
  const { rows, problems } = await valueProblems(connection, def, file);
  if (rows !== expectedRows) {
    throw new DatasetError(
      `${file}: has ${rows} rows but the manifest says ${expectedRows}; the file and manifest.json disagree, so regenerate the release`,
    );
  }
  refuseProblems(problems);

  const strings = def.dimensions.filter((d) => !INTEGER_DIMENSIONS.has(d));
  const enumType = (dim: string) => `${schema}.${quoteIdent(`${def.name}__${dim}`)}`;
  for (const dim of strings) {
    await turns.turn();
    await connection.run(`CREATE TYPE ${enumType(dim)} AS ENUM (SELECT DISTINCT ${quoteIdent(dim)} FROM ${source} ORDER BY 1)`);
  }
  const table = `${schema}.${quoteIdent(def.name)}`;
  // Sorted once, as ENUMs (ordered like their sorted strings), so the sort carries
  // small codes instead of text, then numbered in that order: a window with its own
  // ORDER BY and a final ORDER BY rid sorted twice, at twice the memory.
  // readColumns checks the order that results. A sample of rows keeps DuckDB's own
  // JSON for the self-check.
  const typed = def.dimensions.map((dim) =>
    INTEGER_DIMENSIONS.has(dim)
      ? `${quoteIdent(dim)}::INTEGER AS ${quoteIdent(dim)}`
      : `${quoteIdent(dim)}::${enumType(dim)} AS ${quoteIdent(dim)}`,
  );
  const stride = Math.max(1, Math.floor(expectedRows / SELF_CHECK_ROWS));
  await turns.turn();
  await connection.run(`
    CREATE TABLE ${table} AS
    SELECT rid,
           ${def.dimensions.map((dim) => (INTEGER_DIMENSIONS.has(dim) ? quoteIdent(dim) : `enum_code(${quoteIdent(dim)}) AS ${quoteIdent(dim)}`)).join(', ')},
           ${def.metrics
             .map(quoteIdent)
             .map((m) => `${m}, `)
             .join('')}
           CASE WHEN rid % ${stride} = 0 OR rid = ${expectedRows - 1} THEN ${rowJson(def)} END AS self_check
    FROM (
      SELECT (row_number() OVER () - 1)::INTEGER AS rid, *
      FROM (
        SELECT ${typed.join(', ')}${def.metrics.map((m) => `, ${quoteIdent(m)}::DOUBLE AS ${quoteIdent(m)}`).join('')}
        FROM ${source}
        ORDER BY ${def.dimensions.map(quoteIdent).join(', ')}
      )
    )`);

  const dictionaries = new Map<string, Dictionary>();
  for (const dim of def.dimensions) {
    const sql = INTEGER_DIMENSIONS.has(dim)
      ? `SELECT DISTINCT ${quoteIdent(dim)} AS v, to_json(v)::VARCHAR FROM ${table} ORDER BY 1`
      : `SELECT v::VARCHAR, to_json(v::VARCHAR)::VARCHAR FROM unnest(enum_range(NULL::${enumType(dim)})) AS t(v)`;
    const rows = (await connection.runAndReadAll(sql)).getRows();
    dictionaries.set(dim, {
      values: rows.map(([value]) => (INTEGER_DIMENSIONS.has(dim) ? Number(value) : String(value))),
      json: rows.map(([, json]) => String(json)),
    });
  }

  // Fragments average ~100 B, so at most one combination per 16 rows keeps them
  // under ~6 B a row: a small dataset is not fused into a fragment per row.
  const limit = Math.min(MAX_COMBINATIONS, Math.max(0x100, Math.floor(expectedRows / 16)));
  const { store, samples } = await readColumns(connection, table, def, file, expectedRows, dictionaries, limit, turns);
  await connection.run(`ALTER TABLE ${table} DROP COLUMN self_check`);
  for (const metric of def.metrics) await connection.run(`ALTER TABLE ${table} DROP COLUMN ${quoteIdent(metric)}`);

  // Integer columns hold the value itself, text columns its code.
  const codes = new Map(
    def.dimensions.map((dim) => [
      dim,
      new Map(dictionaries.get(dim)!.values.map((value, code) => [String(value), INTEGER_DIMENSIONS.has(dim) ? Number(value) : code])),
    ]),
  );
  return { dataset: { def, table, store, codes, aggregates: await buildAggregateTables(def, store, turns) }, samples };
}

/**
 * Reads the served table in storage order into columns, checking what the keyset
 * relies on: storage order is `rid` order, and rows ascend by every dimension (codes
 * sort like their values). Two rows with the same dimension values are neighbours
 * then: such a file is refused, since their order (and so every cursor into it)
 * would be arbitrary.
 */
async function readColumns(
  connection: DuckDBConnection,
  table: string,
  def: DatasetDef,
  file: string,
  rows: number,
  dictionaries: ReadonlyMap<string, Dictionary>,
  maxCombinations: number,
  turns: Turns,
): Promise<{ store: ColumnStore; samples: Array<[number, string]> }> {
  const dims = def.dimensions;
  const codes: CodeArray[] = dims.map((dim) => codeArray(dictionaries.get(dim)!.values.length, rows));
  // Integer dimensions hold values, not codes: their dictionary gives the code.
  const integerCodes = dims.map((dim) =>
    INTEGER_DIMENSIONS.has(dim) ? new Map(dictionaries.get(dim)!.values.map((v, code) => [v as number, code])) : null,
  );
  const values = def.metrics.map(() => new Float64Array(rows));
  const samples: Array<[number, string]> = [];
  let duplicates = 0;
  let example: { rid: number; count: number } | undefined;

  const result = await connection.stream(`SELECT rid, ${[...dims, ...def.metrics].map(quoteIdent).join(', ')}, self_check FROM ${table}`);
  let row = 0;
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    await turns.turn();
    const vectors = Array.from({ length: chunk.columnCount }, (_, c) => chunk.getColumnVector(c));
    const [ridVector, ...rest] = vectors;
    const checkVector = rest.pop()!;
    for (let i = 0; i < chunk.rowCount; i++, row++) {
      const rid = ridVector!.getItem(i) as number;
      if (rid !== row) throw new Error(`${table}: row ${row} in storage order has rid ${rid}; pages would skip or repeat rows`);
      // The first dimension where this row differs from the previous one.
      let differs = row > 0 ? -1 : 0;
      for (let d = 0; d < dims.length; d++) {
        const item = rest[d]!.getItem(i) as number;
        const code = integerCodes[d] ? integerCodes[d]!.get(item)! : item;
        if (differs < 0 && codes[d]![row - 1] !== code) {
          if (code < codes[d]![row - 1]!)
            throw new Error(`${table}: row ${row} sorts before row ${row - 1} on ${dims[d]}; rids are not in serving order`);
          differs = d;
        }
        codes[d]![row] = code;
      }
      for (let m = 0; m < values.length; m++) values[m]![row] = rest[dims.length + m]!.getItem(i) as number;
      const check = checkVector.getItem(i);
      if (check !== null) samples.push([rid, String(check)]);
      if (differs < 0) {
        duplicates++;
        if (!example) example = { rid: row, count: 2 };
        else if (example.rid + example.count - 1 === row) example.count++;
      }
    }
  }
  // An interrupted stream just ends, without an error: stopped, not short of rows.
  await turns.turn();
  if (row !== rows) throw new Error(`${table}: read ${row} rows, expected ${rows}`);
  if (example) {
    const key = dims.map((dim, d) => `${dim}=${JSON.stringify(dictionaries.get(dim)!.values[codes[d]![example!.rid]!])}`).join(', ');
    throw new DatasetError(
      `${file}: ${duplicates === 1 ? '1 row repeats' : `${duplicates} rows repeat`} the dimension values of another row (for example ${key} appears ${example.count} times); each row needs its own combination of ${dims.join(', ')}, so merge or remove the duplicates and regenerate the file`,
    );
  }
  const inputs: DimensionInput[] = dims.map((name, d) => ({ name, dictionary: dictionaries.get(name)!, codes: codes[d]! }));
  const metrics: MetricColumn[] = [];
  for (const [m, name] of def.metrics.entries()) metrics.push({ name, values: values[m]!, scale: await decimalScale(values[m]!, turns) });
  return { store: await ColumnStore.build(rows, inputs, metrics, maxCombinations, turns), samples };
}

/** The row exactly as the API has always returned it; financial rows split dimensions from values. */
function rowJson(def: DatasetDef): string {
  const struct = (names: readonly string[], cast: (n: string) => string) =>
    `{${names.map((n) => `${quoteLiteral(n)}: ${cast(n)}`).join(', ')}}`;
  const dim = (n: string) => (INTEGER_DIMENSIONS.has(n) ? `${quoteIdent(n)}::INTEGER` : `${quoteIdent(n)}::VARCHAR`);
  const body =
    def.kind === 'financial'
      ? `{'dimensions': ${struct(def.dimensions, dim)}, 'values': ${struct(def.metrics, (n) => `${quoteIdent(n)}::DOUBLE`)}}`
      : struct(def.dimensions, dim);
  return `to_json(${body})::VARCHAR`;
}
