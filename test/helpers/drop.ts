import fs from 'node:fs/promises';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { loadDrop } from '../../etl/load.ts';
import { quoteLiteral } from '../../src/duckdb/sql-text.ts';
import { tempDir } from './service.ts';

// Drops as another tool writes them: plain DuckDB SELECTs copied to Parquet, then
// published by `etl load`'s own code, as a publisher's monthly drop is.

/** Runs `run` on a connection to a fresh in-memory DuckDB, closed after. */
export async function duckdb<T>(run: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    return await run(connection);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** Each dataset's SELECT (by dataset name) written to its Parquet file and published as `release` into a new DATA_DIR, which it returns. */
export async function publishDrop(sql: Readonly<Record<string, string>>, release: string): Promise<string> {
  const source = await tempDir('dqs-drop-');
  const dataDir = await tempDir('dqs-drop-data-');
  try {
    await duckdb(async (connection) => {
      for (const [name, select] of Object.entries(sql))
        await connection.run(`COPY (${select}) TO ${quoteLiteral(path.join(source, `${name}.parquet`))} (FORMAT parquet)`);
    });
    await loadDrop({ drop: source, dataDir, release, force: false, minYear: 1990, maxYear: 2100, maxRowChange: 0.25 });
  } finally {
    await fs.rm(source, { recursive: true, force: true });
  }
  return dataDir;
}
