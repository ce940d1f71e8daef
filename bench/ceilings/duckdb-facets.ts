import os from 'node:os';
import path from 'node:path';
import { Database } from '../../src/duckdb/database.ts';
import { quoteIdent, quoteLiteral } from '../../src/duckdb/sql-text.ts';
import { findDataset } from '../../src/registry.ts';
import type { ReleaseOnDisk } from '../../src/releases/on-disk.ts';
import type { Stats } from '../runner/load.ts';
import { timed } from './duckdb-pages.ts';

// The facets scenario (ggr's facets under two filters) and its ceiling: DuckDB alone
// running the same counts in the bench process, one GROUP BY per dimension with every
// filter but the dimension's own, in one statement over a native table of the release's
// ggr; checked against our answer before it is timed.

const FILTERS: Readonly<Record<string, string>> = { region: 'Europe', channel: 'Online' };
export const FACETS = `/v1/facets?metric=ggr&${Object.entries(FILTERS)
  .map(([d, v]) => `${d}=${encodeURIComponent(v)}`)
  .join('&')}`;

const DIMENSIONS = findDataset('ggr', 'financial')!.dimensions;
const FACETS_SQL = DIMENSIONS.map((dimension) => {
  const others = Object.entries(FILTERS).filter(([d]) => d !== dimension);
  const where = others.length ? ` WHERE ${others.map(([d, v]) => `${quoteIdent(d)} = ${quoteLiteral(v)}`).join(' AND ')}` : '';
  return `SELECT ${quoteLiteral(dimension)} AS d, ${quoteIdent(dimension)}::VARCHAR AS v, count(*)::INTEGER AS n FROM ggr${where} GROUP BY ${quoteIdent(dimension)}`;
}).join(' UNION ALL ');

type Answer = { data: Record<string, { value: string | number; rows: number }[]>; meta: { values_left_out: Record<string, number> } };

/** Throws unless DuckDB's counts are ours: every value listed with its count, and as many values left out. */
function checkFacets(ours: Answer, rows: unknown[][]): void {
  for (const dimension of DIMENSIONS) {
    const theirs = new Map(rows.filter(([d]) => d === dimension).map(([, v, n]) => [String(v), Number(n)]));
    const listed = ours.data[dimension]!;
    const bad = listed.find((f) => theirs.get(String(f.value)) !== f.rows);
    if (bad || theirs.size !== listed.length + ours.meta.values_left_out[dimension]!)
      throw new Error(
        `DuckDB alone does not count ${dimension} as we do (${bad ? String(bad.value) : `${theirs.size} values`}); fix it before timing`,
      );
  }
}

/** DuckDB alone on the facets' counts, `one` runs from one worker and `sixteen` from 16 over 4 connections, as the service's pool has. */
export async function facetsAlone(
  release: ReleaseOnDisk,
  ours: Buffer,
  counts: { one: number; sixteen: number },
): Promise<{ one: Stats; sixteen: Stats }> {
  const db = await Database.open({
    connections: 4,
    threads: 1,
    memoryLimit: '2GB',
    tempDirectory: path.join(os.tmpdir(), `dqs-bench-facets-${process.pid}`),
  });
  const loader = await db.connect();
  try {
    await loader.run(
      `CREATE TABLE ggr AS SELECT * FROM read_parquet(${quoteLiteral(path.join(release.dir, release.manifest.datasets.ggr!.file))})`,
    );
    checkFacets(JSON.parse(ours.toString()) as Answer, (await loader.runAndReadAll(FACETS_SQL)).getRowsJS());
    const run = () => db.use((lease) => lease.connection.runAndReadAll(FACETS_SQL).then((r) => r.getRowsJS()));
    return { one: await timed(run, 1, counts.one), sixteen: await timed(run, 16, counts.sixteen) };
  } finally {
    loader.closeSync();
    db.close();
  }
}
