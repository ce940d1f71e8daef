import path from 'node:path';
import pino from 'pino';
import { Database } from '../src/data/duckdb.ts';
import { loadRelease } from '../src/data/loader.ts';
import type { ReleaseOnDisk } from '../src/data/releases.ts';
import { quoteLiteral } from '../src/data/sql-text.ts';
import { whereClauses } from '../src/query/filters.ts';
import { readPage } from '../src/query/page.ts';
import { summarize, type Stats } from './load.ts';

// DuckDB on its own, in this process, for the page the HTTP bench asks for: the
// served path (keyset query + row store) beside the alternatives it was chosen over.

const RUNS = 200;

async function time(run: () => Promise<unknown>): Promise<Stats> {
  for (let i = 0; i < 10; i++) await run();
  const latencies: number[] = [];
  const started = performance.now();
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await run();
    latencies.push(performance.now() - t);
  }
  return summarize(latencies, (performance.now() - started) / 1000, 0);
}

export async function sqlBench(release: ReleaseOnDisk, filters: Map<string, string[]>, threads: number): Promise<Array<[string, Stats]>> {
  const db = await Database.open({ connections: 1, threads });
  const loader = await db.connect();
  const ggr = (await loadRelease(loader, release, pino({ level: 'silent' }))).datasets.get('ggr')!;
  const clauses = whereClauses(ggr, filters)!;
  const served = async (after: number) => {
    const page = await readPage(db, ggr, clauses, 1000, after);
    return ggr.json.render(page.rids, '[', ']');
  };
  // The late page's start, found the way a client finds it: by walking the pages.
  const starts = [-1];
  for (let page = await readPage(db, ggr, clauses, 1000, -1); page.nextAfter !== undefined; page = await readPage(db, ggr, clauses, 1000, page.nextAfter)) {
    starts.push(page.nextAfter);
  }
  const lateAfter = starts[Math.floor(starts.length * 0.9)]!;

  // The naive layout: VARCHAR dimensions straight from Parquet, numbered in file order.
  const file = quoteLiteral(path.join(release.dir, 'ggr.parquet'));
  await loader.run(`CREATE TABLE naive AS SELECT row_number() OVER () AS row_id, * FROM read_parquet(${file})`);
  const [[dimA, [valueA]], [dimB, [valueB]]] = [...filters] as [[string, string[]], [string, string[]]];
  const where = `WHERE "${dimA}" = $1 AND "${dimB}" = $2`;
  const dims = ggr.def.dimensions;
  const struct = `{'dimensions': {${dims.map((d) => `'${d}': "${d}"`).join(', ')}}, 'values': {'ggr': ggr}}`;
  const params = [valueA!, valueB!];

  const results: Array<[string, Stats]> = [];
  results.push(['served: keyset rids (LIMIT, no sort) + row store', await time(() => served(-1))]);
  results.push(['served, late page (cursor 90% in)', await time(() => served(lateAfter))]);
  await db.use(async (lease) => {
    const { connection } = lease;
    results.push(['alt: naive VARCHAR table, ORDER BY LIMIT, getRowObjectsJS + JSON.stringify', await time(async () => {
      const reader = await connection.runAndReadAll(`SELECT * EXCLUDE (row_id) FROM naive ${where} ORDER BY row_id LIMIT 1000`, params);
      return JSON.stringify(reader.getRowObjectsJS().map((row) => ({ dimensions: Object.fromEntries(dims.map((d) => [d, row[d]])), values: { ggr: row.ggr } })));
    })]);
    results.push(['alt: DuckDB renders the page (to_json + string_agg), ORDER BY LIMIT', await time(async () => {
      const reader = await connection.runAndReadAll(`SELECT string_agg(to_json(${struct}), ',' ORDER BY row_id) FROM (SELECT * FROM naive ${where} ORDER BY row_id LIMIT 1000)`, params);
      return reader.getRows();
    })]);
    const ordered = `SELECT rid FROM ${ggr.table} WHERE ${clauses.map((c, i) => c.sql.replace('?', `$${i + 1}`)).join(' AND ')} ORDER BY rid LIMIT 1001`;
    results.push(['alt: served table but ORDER BY rid LIMIT (sorts every match)', await time(() => lease.queryInts(ordered, clauses.map((c) => c.params[0]!)))]);
  });
  loader.closeSync();
  db.close();
  return results;
}
