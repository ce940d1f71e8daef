import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import pino from 'pino';
import { Database } from '../../src/duckdb/database.ts';
import { quoteIdent, quoteLiteral } from '../../src/duckdb/sql-text.ts';
import { pageQuery, whereClauses } from '../../src/query/filters.ts';
import { readPage } from '../../src/query/page.ts';
import { loadRelease, type ServedDataset } from '../../src/releases/load-release.ts';
import type { ReleaseOnDisk } from '../../src/releases/on-disk.ts';
import { latestRelease } from '../../src/releases/on-disk.ts';
import { formatDouble, writeDouble } from '../../src/render/json-number.ts';
import { jsonSyntax } from '../../src/render/json-syntax.ts';
import { TextRenderer } from '../../src/render/text-renderer.ts';
import { ColumnStore, codeArray, type DimensionInput } from '../../src/store/column-store.ts';
import { type Stats, summarize } from '../runner/load.ts';
import { PAGE_FILTERS } from '../scenarios/suite.ts';

// `npx tsx bench/scripts/sql.ts [DATA_DIR]`: DuckDB on its own, in this process, for the bench
// page: the served path (keyset query + columnar store) beside the alternatives it was
// chosen over, each checked to return the served rows before it is timed. Then
// rendering alone, for the ways of storing and rendering rows that were measured
// (docs/performance.md, "Uncached pages"). The suite's own DuckDB ceiling
// is bench/ceilings/duckdb-pages.ts.

const RUNS = 200;
const RENDER_RUNS = 2000;

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

function timeSync(run: () => unknown): Stats {
  for (let i = 0; i < RENDER_RUNS / 4; i++) run();
  const latencies: number[] = [];
  const started = performance.now();
  for (let i = 0; i < RENDER_RUNS; i++) {
    const t = performance.now();
    run();
    latencies.push(performance.now() - t);
  }
  return summarize(latencies, (performance.now() - started) / 1000, 0);
}

/** Throws unless `got` holds the same rows, in the same order, as the served page. */
function sameRows(name: string, got: unknown, served: unknown): void {
  if (!isDeepStrictEqual(got, served)) throw new Error(`${name} does not return the served rows; fix the alternative before timing it`);
}

async function sqlBench(release: ReleaseOnDisk, filters: Map<string, string[]>, threads: number): Promise<Array<[string, Stats]>> {
  const db = await Database.open({ connections: 1, threads });
  const loader = await db.connect();
  const ggr = (await loadRelease(loader, release, pino({ level: 'silent' }))).datasets.get('ggr')!;
  const clauses = whereClauses(ggr, filters)!;
  const served = async (after: number) => {
    const page = await readPage(db, ggr, clauses, 1000, after);
    return ggr.rows.json.render(page.rids, '[', ']');
  };
  // The late page's start, found the way a client finds it: by walking the pages.
  const starts = [-1];
  for (
    let page = await readPage(db, ggr, clauses, 1000, -1);
    page.nextAfter !== undefined;
    page = await readPage(db, ggr, clauses, 1000, page.nextAfter)
  ) {
    starts.push(page.nextAfter);
  }
  const lateAfter = starts[Math.floor(starts.length * 0.9)]!;
  const firstPage = await readPage(db, ggr, clauses, 1000, -1);
  const servedRows = JSON.parse((await served(-1)).toString());

  // The naive layout: VARCHAR dimensions straight from Parquet, numbered in serving order.
  const dims = ggr.def.dimensions;
  const file = quoteLiteral(path.join(release.dir, 'ggr.parquet'));
  await loader.run(
    `CREATE TABLE naive AS SELECT row_number() OVER (ORDER BY ${dims.map(quoteIdent).join(', ')}) AS row_id, * FROM read_parquet(${file})`,
  );
  const params: string[] = [];
  const where = `WHERE ${[...filters].map(([dim, values]) => `${quoteIdent(dim)} IN (${values.map((v) => `$${params.push(v)}`).join(', ')})`).join(' AND ')}`;
  const struct = `{'dimensions': {${dims.map((d) => `'${d}': ${quoteIdent(d)}`).join(', ')}}, 'values': {'ggr': ggr}}`;
  // The served rid query, but sorted: every parameter bound, as the served query binds them.
  const sorted = pageQuery(ggr.table, clauses, 1000, -1);
  const sortedSql = sorted.sql.replace(/ LIMIT /, ' ORDER BY rid LIMIT ');

  const results: Array<[string, Stats]> = [];
  const alternatives: Array<[string, () => Promise<unknown>]> = [];
  await db.use(async (lease) => {
    const { connection } = lease;
    alternatives.push(
      [
        'alt: naive VARCHAR table, ORDER BY LIMIT, getRowObjectsJS + JSON.stringify',
        async () => {
          const reader = await connection.runAndReadAll(`SELECT * EXCLUDE (row_id) FROM naive ${where} ORDER BY row_id LIMIT 1000`, params);
          return JSON.stringify(
            reader
              .getRowObjectsJS()
              .map((row) => ({ dimensions: Object.fromEntries(dims.map((d) => [d, row[d]])), values: { ggr: row.ggr } })),
          );
        },
      ],
      [
        'alt: DuckDB renders the page (to_json + string_agg), ORDER BY LIMIT',
        async () => {
          const reader = await connection.runAndReadAll(
            `SELECT '[' || string_agg(to_json(${struct}), ',' ORDER BY row_id) || ']' FROM (SELECT * FROM naive ${where} ORDER BY row_id LIMIT 1000)`,
            params,
          );
          return String(reader.getRows()[0]![0]);
        },
      ],
      [
        'alt: served table but ORDER BY rid LIMIT (sorts every match), query only',
        async () => {
          const result = await lease.queryInts(sortedSql, sorted.params);
          return (await result.getRowsJS()).slice(0, 1000).map(([rid]) => Number(rid));
        },
      ],
    );
    for (const [name, run] of alternatives) {
      const out = await run();
      sameRows(name, typeof out === 'string' ? JSON.parse(out) : out, typeof out === 'string' ? servedRows : firstPage.rids);
    }
  });
  results.push(['served: keyset rids (LIMIT, no sort) + JSON from the column store', await time(() => served(-1))]);
  results.push(['served, late page (cursor 90% in)', await time(() => served(lateAfter))]);
  await db.use(async () => {
    for (const [name, run] of alternatives) results.push([name, await time(run)]);
  });
  results.push(...(await renderBench(ggr, firstPage.rids)));
  loader.closeSync();
  db.close();
  return results;
}

/**
 * Rendering alone, the first page's 1000 rows, for each way of keeping rows that was
 * measured; every one is checked to produce the served bytes first. The name says
 * what it costs per row to keep.
 */
async function renderBench(ggr: ServedDataset, rids: readonly number[]): Promise<Array<[string, Stats]>> {
  const { store } = ggr;
  const expected = ggr.rows.json.render(rids, '[', ']');
  const rows = store.rowCount;
  const inputs: DimensionInput[] = store.dimensions.map((column, d) => {
    const codes = codeArray(column.dictionary.values.length, rows);
    for (let rid = 0; rid < rows; rid++) codes[rid] = store.code(d, rid);
    return { name: column.name, dictionary: column.dictionary, codes };
  });
  const results: Array<[string, Stats]> = [];
  const check = (name: string, run: () => Buffer) => {
    if (!run().equals(expected)) throw new Error(`${name} does not render the served bytes`);
    results.push([name, timeSync(run)]);
  };
  const layout = (label: string, variant: ColumnStore, json: TextRenderer) => {
    const perRow = variant.bytesPerRow + json.fragmentBytes / rows;
    check(`render: ${label}, ${variant.segments.length} copies/row, ${perRow.toFixed(1)} B/row`, () => json.render(rids, '[', ']'));
  };
  // The served renderer first: timed before the variants add code-array types for
  // the same render loop to meet.
  layout('as served (fused up to 65,536 combinations)', store, ggr.rows.json);
  for (const [label, max] of [
    ['every dimension apart', 1],
    ['fused up to 256 combinations', 0x100],
  ] as const) {
    const variant = await ColumnStore.build(rows, inputs, store.metrics, max);
    layout(label, variant, await TextRenderer.create(variant, jsonSyntax(variant, 'financial')));
  }

  // The metric alone, three ways, for the same 1000 values.
  const values = rids.map((rid) => store.metrics[0]!.values[rid]!);
  const out = Buffer.allocUnsafe(values.length * 32);
  const text = values.map((x) => Buffer.from(formatDouble(x)));
  const numbers = (name: string, run: () => number) => {
    if (out.toString('latin1', 0, run()) !== text.map(String).join('')) throw new Error(`${name} does not print DuckDB's text`);
    results.push([name, timeSync(run)]);
  };
  numbers('numbers: Float64Array + writeDouble (kept), 8 B/row', () => values.reduce((at, x) => writeDouble(out, at, x), 0));
  numbers('numbers: Float64Array + String(x) (formatDouble), 8 B/row', () =>
    values.reduce((at, x) => at + out.write(formatDouble(x), at, 'latin1'), 0),
  );
  numbers('numbers: pre-rendered text copied, ~10 B text + 4 B offset/row', () =>
    text.reduce((at, t) => {
      out.set(t, at);
      return at + t.length;
    }, 0),
  );

  // What the previous commit served from: each row's finished JSON, one copy per row.
  const finished = rids.map((rid) => ggr.rows.json.render([rid], '', ''));
  const heap = Buffer.concat(finished);
  const offsets = [0];
  for (const f of finished) offsets.push(offsets.at(-1)! + f.length);
  check(`render: previous row store (finished JSON), 1 copy/row, ${(heap.length / finished.length + 8).toFixed(0)} B/row`, () => {
    const page = Buffer.allocUnsafe(heap.length + finished.length + 1);
    let at = page.write('[');
    finished.forEach((_, i) => {
      if (i > 0) page[at++] = 0x2c;
      at += heap.copy(page, at, offsets[i], offsets[i + 1]);
    });
    at += page.write(']', at);
    return page.subarray(0, at);
  });
  return results;
}

const dataDir = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..', '..', 'tmp', 'bench', 'data'));
const release = await latestRelease(dataDir);
if (!release) throw new Error(`${dataDir} holds no release: run \`npm run bench -- --quick\` once (it generates one) or pass a DATA_DIR`);
for (const [name, stats] of await sqlBench(release, PAGE_FILTERS, 1)) {
  console.log(`${name.padEnd(80)} p50 ${stats.p50.toFixed(3).padStart(7)} ms  p99 ${stats.p99.toFixed(3).padStart(7)} ms`);
}
