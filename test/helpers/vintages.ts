import fs from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { type LoadOptions, loadDrop } from '../../etl/load.ts';
import { rollback } from '../../etl/releases.ts';
import { quoteLiteral } from '../../src/duckdb/sql-text.ts';
import { findDataset } from '../../src/registry.ts';
import { FIXTURE_RELEASE, fixtureDataDir, tempDir } from './service.ts';

// Three releases of ggr written by plain DuckDB from the fixture's file, loaded with
// `etl load` at known times, then a rollback: what point-in-time answers are checked
// against. Observations are ggr rows, by their place in the fixture's file:
// A (row 1) added in R1, changed in R2, removed in R3; B (row 2) the same throughout;
// C (row 3) added in R3; D (row 4) changed in R2 and back in R3 to its R1 value.

export const R1 = '2026-01';
export const R2 = '2026-02';
export const R3 = '2026-03';
export const PUBLISHED = {
  [R1]: '2026-01-05T10:00:00.000Z',
  [R2]: '2026-02-05T10:00:00.000Z',
  [R3]: '2026-03-05T10:00:00.000Z',
} as const;
/** When R3 was rolled back to R2. */
export const ROLLED_BACK = '2026-03-10T08:00:00.000Z';

export interface Vintages {
  readonly dataDir: string;
  /** Each release's ggr file, as DuckDB wrote it. */
  readonly files: Readonly<Record<string, string>>;
  /** Each observation's dimensions, by its letter. */
  readonly observations: Readonly<Record<'A' | 'B' | 'C' | 'D', Readonly<Record<string, string | number>>>>;
  readonly remove: () => Promise<void>;
}

/** The fixture's ggr rows, each release's changes made by DuckDB, loaded in order; `rolledBack` then rolls R3 back to R2. */
export async function vintages(options: { rolledBack: boolean }): Promise<Vintages> {
  const fixture = path.join(await fixtureDataDir(), FIXTURE_RELEASE);
  const work = await tempDir('dqs-vintages-');
  const dataDir = path.join(work, 'data');
  const dimensions = findDataset('ggr', 'financial')!.dimensions;
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const connection = await instance.connect();
  const files: Record<string, string> = {};
  try {
    await connection.run(
      `CREATE TABLE base AS SELECT *, row_number() OVER () AS rn FROM read_parquet(${quoteLiteral(path.join(fixture, 'ggr.parquet'))})`,
    );
    // Each release: which rows it has, and the factor on each row's ggr.
    const releases: Record<string, string> = {
      [R1]: `SELECT * EXCLUDE (rn) FROM base WHERE rn <> 3`,
      [R2]: `SELECT * EXCLUDE (rn) REPLACE (CASE rn WHEN 1 THEN ggr * 2 + 1 WHEN 4 THEN ggr * 3 + 1 ELSE ggr END AS ggr) FROM base WHERE rn <> 3`,
      [R3]: `SELECT * EXCLUDE (rn) FROM base WHERE rn <> 1`,
    };
    for (const [id, select] of Object.entries(releases)) {
      const drop = path.join(work, `drop-${id}`);
      await fs.mkdir(drop);
      for (const file of await fs.readdir(fixture))
        if (file.endsWith('.parquet') && file !== 'ggr.parquet') await fs.copyFile(path.join(fixture, file), path.join(drop, file));
      files[id] = path.join(drop, 'ggr.parquet');
      await connection.run(`COPY (${select} ORDER BY ALL) TO ${quoteLiteral(files[id])} (FORMAT parquet)`);
    }
    const letters = ['A', 'B', 'C', 'D'] as const;
    const reader = await connection.runAndReadAll(`SELECT ${dimensions.join(', ')} FROM base WHERE rn <= 4 ORDER BY rn`);
    const observations = Object.fromEntries(
      reader
        .getRowObjectsJS()
        .map((row, i) => [letters[i], Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v as string | number]))]),
    ) as unknown as Vintages['observations'];
    const load = (id: keyof typeof PUBLISHED): LoadOptions => ({
      drop: path.dirname(files[id]!),
      dataDir,
      release: id,
      force: true,
      minYear: 1990,
      maxYear: 2100,
      maxRowChange: 0.25,
      now: () => new Date(PUBLISHED[id]),
    });
    await loadDrop(load(R1));
    await loadDrop(load(R2));
    await loadDrop(load(R3));
    if (options.rolledBack) await rollback(dataDir, R2, () => new Date(ROLLED_BACK));
    return { dataDir, files, observations, remove: () => fs.rm(work, { recursive: true, force: true }) };
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** The ggr of observation `dims` in a release's file, by plain DuckDB; undefined when the file lacks it. */
export async function ggrIn(file: string, dims: Readonly<Record<string, string | number>>): Promise<number | undefined> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const where = Object.entries(dims)
      .map(([k, v]) => `${k} = ${typeof v === 'number' ? v : quoteLiteral(v)}`)
      .join(' AND ');
    const rows = (await connection.runAndReadAll(`SELECT ggr FROM read_parquet(${quoteLiteral(file)}) WHERE ${where}`)).getRowObjectsJS();
    return rows.length ? Number(rows[0]!.ggr) : undefined;
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}
