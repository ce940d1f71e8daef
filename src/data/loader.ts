import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Logger } from 'pino';
import { SERVING_CATALOG } from './duckdb.ts';
import { DATASETS, INTEGER_DIMENSIONS, type DatasetDef } from './registry.ts';
import { ReleaseError } from './manifest.ts';
import type { ReleaseOnDisk } from './releases.ts';
import { RowStore } from './row-store.ts';
import { quoteIdent, quoteLiteral } from './sql-text.ts';

export interface ServedDataset {
  readonly def: DatasetDef;
  /** Quoted, schema-qualified table name; comes from the registry, never from a request. */
  readonly table: string;
  /** Each row's response JSON, indexed by `rid`. */
  readonly rows: RowStore;
  /** For each string dimension, value → the integer code stored in its column. */
  readonly codes: ReadonlyMap<string, ReadonlyMap<string, number>>;
}

export interface LoadedRelease {
  readonly id: string;
  readonly datasets: ReadonlyMap<string, ServedDataset>;
}


const INTEGER_TYPES = new Set(['TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'UTINYINT', 'USMALLINT', 'UINTEGER']);
const NUMERIC_TYPES = new Set([...INTEGER_TYPES, 'FLOAT', 'DOUBLE', 'UBIGINT', 'HUGEINT']);

/**
 * Copies a release's Parquet files into native DuckDB tables laid out for serving:
 * rows sorted in serving order and numbered by `rid` (the keyset), string dimensions
 * stored as small integer codes (what filters compare). Each row's response JSON is
 * rendered once here, by DuckDB, into a RowStore, so a request only copies bytes.
 */
export async function loadRelease(
  connection: DuckDBConnection,
  release: ReleaseOnDisk,
  log: Logger,
): Promise<LoadedRelease> {
  const schema = `${SERVING_CATALOG}.${quoteIdent(`r${release.manifest.release.replace('-', '_')}`)}`;
  await connection.run(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  const datasets = new Map<string, ServedDataset>();
  for (const def of DATASETS) {
    const started = performance.now();
    const entry = release.manifest.datasets[def.name]!;
    const served = await loadDataset(connection, schema, def, path.join(release.dir, entry.file), entry.rows);
    datasets.set(def.name, served);
    log.info({ dataset: def.name, rows: served.rows.rowCount, bytes: served.rows.byteLength, ms: Math.round(performance.now() - started) }, 'dataset loaded');
  }
  return { id: release.manifest.release, datasets };
}

async function loadDataset(
  connection: DuckDBConnection,
  schema: string,
  def: DatasetDef,
  file: string,
  expectedRows: number,
): Promise<ServedDataset> {
  const stage = quoteIdent(`stage_${def.name}`);
  await connection.run(`CREATE OR REPLACE TEMP TABLE ${stage} AS SELECT * FROM read_parquet(${quoteLiteral(file)})`).catch((err: Error) => {
    throw new ReleaseError(`${file}: cannot read as Parquet (${err.message}); regenerate the file`);
  });
  try {
    await checkColumns(connection, stage, def, file);
    await checkValues(connection, stage, def, file, expectedRows);

    const strings = def.dimensions.filter((d) => !INTEGER_DIMENSIONS.has(d));
    const enumType = (dim: string) => `${schema}.${quoteIdent(`${def.name}__${dim}`)}`;
    for (const dim of strings) {
      await connection.run(`CREATE TYPE ${enumType(dim)} AS ENUM (SELECT DISTINCT ${quoteIdent(dim)} FROM ${stage} ORDER BY 1)`);
    }
    const table = `${schema}.${quoteIdent(def.name)}`;
    const order = def.dimensions.map(quoteIdent).join(', ');
    const columns = def.dimensions.map((dim) =>
      INTEGER_DIMENSIONS.has(dim)
        ? `${quoteIdent(dim)}::INTEGER AS ${quoteIdent(dim)}`
        : `enum_code(${quoteIdent(dim)}::${enumType(dim)}) AS ${quoteIdent(dim)}`,
    );
    await connection.run(`
      CREATE TABLE ${table} AS
      SELECT (row_number() OVER (ORDER BY ${order}) - 1)::INTEGER AS rid, ${columns.join(', ')},
             ${rowJson(def)} AS j
      FROM ${stage}
      ORDER BY rid`);

    const rows = await exportRows(connection, table, expectedRows, file);
    await connection.run(`ALTER TABLE ${table} DROP COLUMN j`);

    const codes = new Map<string, Map<string, number>>();
    for (const dim of strings) {
      const reader = await connection.runAndReadAll(`SELECT unnest(enum_range(NULL::${enumType(dim)}))::VARCHAR`);
      codes.set(dim, new Map(reader.getColumns()[0]!.map((value, code) => [String(value), code])));
    }
    return { def, table, rows, codes };
  } finally {
    await connection.run(`DROP TABLE IF EXISTS ${stage}`);
  }
}

/**
 * Writes column `j` in `rid` order as one line per row and reads it back whole.
 * The CSV delimiter and quote are control characters, which JSON text always
 * escapes, so DuckDB writes each value exactly as it is.
 */
async function exportRows(connection: DuckDBConnection, table: string, rows: number, source: string): Promise<RowStore> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dqs-rows-'));
  const file = path.join(dir, 'rows.txt');
  try {
    const text = await connection
      .run(`COPY (SELECT j FROM ${table} ORDER BY rid) TO ${quoteLiteral(file)} (FORMAT csv, HEADER false, DELIMITER '\x01', QUOTE '\x02', ESCAPE '\x02')`)
      .then(() => fs.readFile(file))
      .catch((err: Error) => {
        throw new ReleaseError(`${source}: cannot write the rows for serving to ${os.tmpdir()} (${err.message}); free space there or set TMPDIR`);
      });
    // A malformed row here is a bug in the loader, not in the file: let it surface as one.
    return RowStore.fromLines(text, rows);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** The row exactly as the API returns it; financial rows split dimensions from values. */
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

async function checkColumns(connection: DuckDBConnection, stage: string, def: DatasetDef, file: string) {
  const reader = await connection.runAndReadAll(`SELECT column_name, column_type FROM (DESCRIBE ${stage})`);
  const types = new Map(reader.getRows().map(([name, type]) => [String(name), String(type)]));
  const expect = (column: string, allowed: Set<string> | 'VARCHAR', wanted: string) => {
    const type = types.get(column);
    if (type === undefined) {
      throw new ReleaseError(`${file}: column "${column}" is missing; the ${def.name} dataset needs ${[...def.dimensions, ...def.metrics].join(', ')}, so re-export the file with every one of them`);
    }
    if (allowed === 'VARCHAR' ? type !== 'VARCHAR' : !allowed.has(type)) {
      throw new ReleaseError(`${file}: column "${column}" has type ${type}; write it as ${wanted}`);
    }
  };
  for (const dim of def.dimensions) {
    if (INTEGER_DIMENSIONS.has(dim)) expect(dim, INTEGER_TYPES, 'an integer');
    else expect(dim, 'VARCHAR', 'VARCHAR (text)');
  }
  for (const metric of def.metrics) expect(metric, NUMERIC_TYPES, 'a number (DOUBLE)');
}

async function checkValues(connection: DuckDBConnection, stage: string, def: DatasetDef, file: string, expectedRows: number) {
  const columns = [...def.dimensions, ...def.metrics];
  const bad = columns.map((c) =>
    def.metrics.includes(c)
      ? `count(*) FILTER (WHERE ${quoteIdent(c)} IS NULL OR NOT isfinite(${quoteIdent(c)}::DOUBLE))`
      : `count(*) FILTER (WHERE ${quoteIdent(c)} IS NULL)`,
  );
  const reader = await connection.runAndReadAll(`SELECT count(*), ${bad.join(', ')} FROM ${stage}`);
  const [rows, ...badCounts] = reader.getRows()[0]!.map(Number);
  if (rows !== expectedRows) {
    throw new ReleaseError(`${file}: has ${rows} rows but the manifest says ${expectedRows}; the file and manifest.json disagree, so regenerate the release`);
  }
  badCounts.forEach((count, i) => {
    if (count! > 0) {
      throw new ReleaseError(`${file}: column "${columns[i]}" has ${count} null${def.metrics.includes(columns[i]!) ? ' or non-finite' : ''} values; every row needs one (use '' for a dimension that does not apply)`);
    }
  });
}
