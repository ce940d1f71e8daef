import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { Database } from '../src/duckdb/database.ts';
import { quoteLiteral } from '../src/duckdb/sql-text.ts';
import { currentRelease, latestRelease, type ReleaseOnDisk } from '../src/releases/on-disk.ts';
import { CLICKHOUSE_SKIP_REASON, startClickHouseWithGgr } from './clickhouse.ts';
import { load, summarize, type Request, type Stats } from './load.ts';
import { processMemory, startServer } from './server.ts';

// `npx tsx bench/aggregate.ts DATA_DIR_1X [DATA_DIR_16X]`: the aggregate of issue 15,
// ggr summed by region and year in USD (national rows), uncached and cached over
// HTTP beside DuckDB alone running the same GROUP BY in this process (1 and 2
// threads, over a native table of the release's ggr) and the ClickHouse peer running
// it over the same rows, at 1 and 16 connections; then the same on the 16x release,
// and each server's resident memory. Every answer is checked before it is timed: ours
// byte for byte, the others group for group against ours.

const QUERY = '/v1/aggregate?metric=ggr&group_by=region,year&fx=USD';
const SQL = "SELECT region, year, sum(ggr) AS ggr_sum, count(*) AS rows FROM ggr WHERE fx = 'USD' AND state = '' GROUP BY region, year ORDER BY region, year";
const N = { one: 300, sixteen: 1200, duckdb: 100 };

const line = (text: string) => process.stderr.write(`${text}\n`);
const ms = (x: number) => `${x.toFixed(2)} ms`;

type Groups = Map<string, { sum: number; rows: number }>;

/** Our groups, as the JSON body gives them. */
function ourGroups(body: Buffer): Groups {
  const data = (JSON.parse(body.toString()) as { data: Array<{ dimensions: { region: string; year: number }; values: { ggr_sum: number; rows: number } }> }).data;
  return new Map(data.map((g) => [`${g.dimensions.region}|${g.dimensions.year}`, { sum: g.values.ggr_sum, rows: g.values.rows }]));
}

/** A peer's plain double sums may differ from our exact ones in the last bits only. */
function checkGroups(name: string, ours: Groups, theirs: Groups): void {
  const bad = [...ours].find(([key, g]) => {
    const t = theirs.get(key);
    return !t || t.rows !== g.rows || Math.abs(t.sum - g.sum) > Math.abs(g.sum) * 1e-12;
  });
  if (bad || ours.size !== theirs.size) throw new Error(`${name} does not give our groups (${bad?.[0] ?? `${theirs.size} groups, ours ${ours.size}`}); fix it before timing`);
}

async function duckdbAlone(release: ReleaseOnDisk, threads: number, ours: Groups): Promise<Stats> {
  const db = await Database.open({ connections: 1, threads, memoryLimit: '2GB', tempDirectory: path.join(os.tmpdir(), `dqs-bench-agg-${process.pid}`) });
  const connection = await db.connect();
  try {
    await connection.run(`CREATE TABLE ggr AS SELECT * FROM read_parquet(${quoteLiteral(path.join(release.dir, release.manifest.datasets.ggr!.file))})`);
    const run = async () => (await connection.runAndReadAll(SQL)).getRowsJS();
    const rows = await run();
    checkGroups(`DuckDB (${threads} threads)`, ours, new Map(rows.map(([region, year, sum, count]) => [`${region}|${year}`, { sum: sum as number, rows: Number(count) }])));
    for (let i = 0; i < 10; i++) await run();
    const latencies: number[] = [];
    const started = performance.now();
    for (let i = 0; i < N.duckdb; i++) {
      const t = performance.now();
      await run();
      latencies.push(performance.now() - t);
    }
    return summarize(latencies, (performance.now() - started) / 1000, 0);
  } finally {
    connection.closeSync();
    db.close();
  }
}

async function http(origin: string, requests: Request[]): Promise<{ one: Stats; sixteen: Stats }> {
  await load(origin, requests, 1, 30);
  const one = await load(origin, requests, 1, N.one);
  const sixteen = await load(origin, requests, 16, N.sixteen);
  return { one: summarize(one.latencies, one.seconds, one.bytes), sixteen: summarize(sixteen.latencies, sixteen.seconds, sixteen.bytes) };
}

async function capture(url: string, headers: Record<string, string>): Promise<Request> {
  const res = await request(`${url}${QUERY}`, { headers });
  const body = Buffer.from(await res.body.arrayBuffer());
  if (res.statusCode !== 200) throw new Error(`${QUERY}: ${res.statusCode} ${body.toString()}`);
  return { path: QUERY, headers, status: 200, body };
}

async function measure(dataDir: string, label: string, withPeer: boolean): Promise<void> {
  const release = (await currentRelease(dataDir)) ?? (await latestRelease(dataDir));
  if (!release) throw new Error(`${dataDir} holds no release: generate one with npm run etl -- generate --out ${dataDir}/2026-11 --scale 1`);
  line(`\n${label}: ${release.manifest.datasets.ggr!.rows.toLocaleString()} ggr rows (${release.dir})`);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'dqs-bench-agg-'));
  // Uncached: no response cache and no kept results, so every request groups the rows again.
  const uncached = await startServer({ DATA_DIR: dataDir, STATE_DIR: path.join(work, 'u'), CACHE_MAX_BYTES: '0', AGGREGATE_KEEP_BYTES: '0' }, path.join(work, 'u.log'));
  let ours: Groups;
  try {
    const answer = await capture(uncached.url, uncached.headers);
    ours = ourGroups(answer.body!);
    const { one, sixteen } = await http(uncached.url, [answer]);
    const memory = processMemory(uncached.pid);
    line(`  service, uncached   p50 ${ms(one.p50)} (1 conn)   ${sixteen.rps.toFixed(0)} req/s (16 conn)   RSS ${memory.rss} MB (load peak ${memory.peak} MB)`);
  } finally {
    await uncached.stop();
  }
  const cached = await startServer({ DATA_DIR: dataDir, STATE_DIR: path.join(work, 'c') }, path.join(work, 'c.log'));
  try {
    const answer = await capture(cached.url, cached.headers);
    const { one, sixteen } = await http(cached.url, [answer]);
    line(`  service, cached     p50 ${ms(one.p50)} (1 conn)   ${sixteen.rps.toFixed(0)} req/s (16 conn)`);
  } finally {
    await cached.stop();
  }
  for (const threads of [1, 2]) {
    const alone = await duckdbAlone(release, threads, ours);
    line(`  DuckDB alone, ${threads} thread${threads > 1 ? 's' : ''}  p50 ${ms(alone.p50)} (in process, same GROUP BY, plain double sum)`);
  }
  if (withPeer) {
    let peer;
    try {
      peer = await startClickHouseWithGgr(release, (text) => line(`  ${text}`));
    } catch (err) {
      line(`  ClickHouse: skipped: ${(err as Error).message === CLICKHOUSE_SKIP_REASON ? CLICKHOUSE_SKIP_REASON : (err as Error).message}`);
    }
    if (peer) {
      try {
        const sql = SQL.replace('count(*) AS rows', 'toUInt64(count()) AS rows') + ' FORMAT JSONEachRow';
        const path_ = `/?query=${encodeURIComponent(sql)}`;
        const body = await peer.get(path_);
        const rows = body.toString().trim().split('\n').map((l) => JSON.parse(l) as { region: string; year: number; ggr_sum: number; rows: string | number });
        checkGroups(`ClickHouse ${peer.version}`, ours, new Map(rows.map((r) => [`${r.region}|${r.year}`, { sum: r.ggr_sum, rows: Number(r.rows) }])));
        const { one, sixteen } = await http(peer.url, [{ path: path_, headers: {}, status: 200, body }]);
        line(`  ClickHouse ${peer.version}  p50 ${ms(one.p50)} (1 conn)   ${sixteen.rps.toFixed(0)} req/s (16 conn)   (loaded in ${peer.loadSeconds.toFixed(1)} s)`);
      } finally {
        await peer.stop();
      }
    }
  }
  fs.rmSync(work, { recursive: true, force: true });
}

const [dir1, dir16] = process.argv.slice(2);
if (!dir1) {
  line('usage: npx tsx bench/aggregate.ts DATA_DIR_1X [DATA_DIR_16X]');
  process.exit(2);
}
await measure(path.resolve(dir1), '1x', true);
if (dir16) await measure(path.resolve(dir16), '16x', true);
