import os from 'node:os';
import path from 'node:path';
import { Database } from '../../src/duckdb/database.ts';
import { quoteLiteral } from '../../src/duckdb/sql-text.ts';
import type { ReleaseOnDisk } from '../../src/releases/on-disk.ts';
import type { Stats } from '../runner/load.ts';
import { timed } from './duckdb-pages.ts';

// The aggregate scenario (ggr summed by region and year in USD, national rows) and its ceilings' side: DuckDB alone running the same GROUP BY in the bench
// process over a native table of the release's ggr, and the check every other
// answer (DuckDB's, ClickHouse's) must pass against ours before it is timed.

export const AGGREGATE = '/v1/aggregate?metric=ggr&group_by=region,year&fx=USD';
export const AGGREGATE_SQL =
  "SELECT region, year, sum(ggr) AS ggr_sum, count(*) AS rows FROM ggr WHERE fx = 'USD' AND state = '' GROUP BY region, year ORDER BY region, year";

export type Groups = Map<string, { sum: number; rows: number }>;

/** Our groups, as the JSON body gives them. */
export function ourGroups(body: Buffer): Groups {
  const data = (
    JSON.parse(body.toString()) as {
      data: Array<{ dimensions: { region: string; year: number }; values: { ggr_sum: number; rows: number } }>;
    }
  ).data;
  return new Map(data.map((g) => [`${g.dimensions.region}|${g.dimensions.year}`, { sum: g.values.ggr_sum, rows: g.values.rows }]));
}

/** A peer's plain double sums may differ from our exact ones in the last bits only. */
export function checkGroups(name: string, ours: Groups, theirs: Groups): void {
  const bad = [...ours].find(([key, g]) => {
    const t = theirs.get(key);
    return !t || t.rows !== g.rows || Math.abs(t.sum - g.sum) > Math.abs(g.sum) * 1e-12;
  });
  if (bad || ours.size !== theirs.size)
    throw new Error(`${name} does not give our groups (${bad?.[0] ?? `${theirs.size} groups, ours ${ours.size}`}); fix it before timing`);
}

/**
 * DuckDB alone on AGGREGATE_SQL: `threads` per query (the service runs 1), `one`
 * queries from one worker and `sixteen` from 16 concurrent workers over 4
 * connections, as the service's pool has.
 */
export async function aggregateAlone(
  release: ReleaseOnDisk,
  threads: number,
  ours: Groups,
  counts: { one: number; sixteen: number },
): Promise<{ one: Stats; sixteen: Stats }> {
  const db = await Database.open({
    connections: 4,
    threads,
    memoryLimit: '2GB',
    tempDirectory: path.join(os.tmpdir(), `dqs-bench-agg-${process.pid}`),
  });
  const loader = await db.connect();
  try {
    await loader.run(
      `CREATE TABLE ggr AS SELECT * FROM read_parquet(${quoteLiteral(path.join(release.dir, release.manifest.datasets.ggr!.file))})`,
    );
    const rows = (await loader.runAndReadAll(AGGREGATE_SQL)).getRowsJS();
    checkGroups(
      `DuckDB (${threads} threads)`,
      ours,
      new Map(rows.map(([region, year, sum, count]) => [`${region}|${year}`, { sum: sum as number, rows: Number(count) }])),
    );
    const run = () => db.use((lease) => lease.connection.runAndReadAll(AGGREGATE_SQL).then((r) => r.getRowsJS()));
    return { one: await timed(run, 1, counts.one), sixteen: await timed(run, 16, counts.sixteen) };
  } finally {
    loader.closeSync();
    db.close();
  }
}
