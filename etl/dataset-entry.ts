import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteLiteral } from '../src/duckdb/sql-text.ts';
import type { DatasetDef } from '../src/registry.ts';
import { type Manifest, sha256File } from '../src/releases/manifest.ts';

type DatasetEntry = Manifest['datasets'][string];

/**
 * A dataset's manifest entry for the file `dir/file`: its checksum, and the years it
 * covers, so `/v1/releases` can describe a release that is not loaded without
 * reading it.
 */
export async function datasetEntry(
  connection: DuckDBConnection,
  def: DatasetDef,
  dir: string,
  entry: Omit<DatasetEntry, 'sha256' | 'first_year' | 'last_year'>,
): Promise<DatasetEntry> {
  const file = path.join(dir, entry.file);
  const sha256 = await sha256File(file);
  if (!def.dimensions.includes('year')) return { ...entry, sha256 };
  const [[first, last]] = (
    await connection.runAndReadAll(`SELECT min(year)::INTEGER, max(year)::INTEGER FROM read_parquet(${quoteLiteral(file)})`)
  ).getRows() as [[number | null, number | null]];
  return { ...entry, sha256, ...(first !== null && last !== null && { first_year: first, last_year: last }) };
}
