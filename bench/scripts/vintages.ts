import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { currentRelease, latestRelease } from '../../src/releases/on-disk.ts';
import { releaseCopies } from '../../tools/release-copies.ts';
import { processMemory, startServer } from '../../tools/service-process.ts';
import { load, type Request, type Stats, summarize } from '../runner/load.ts';

// `npx tsx bench/scripts/vintages.ts DATA_DIR_1X`: what `release=` costs. The 1x release is
// published three times (2026-09, 2026-10, 2026-11 current) in a scratch DATA_DIR;
// the server starts on the current one with the response cache off, so every page is
// read and rendered. Then: how long the first request to a release that is not loaded
// waits (its load), the steady RSS with one, two and three releases loaded against one
// release's, and uncached keyset pages of the current release beside the same pages
// of a loaded earlier one, at 1 and 16 connections (ratio: earlier / current).

const line = (text: string) => process.stderr.write(`${text}\n`);
const ms = (x: number) => `${x.toFixed(2)} ms`;
const PAGES = 40;

async function get(url: string, headers: Record<string, string>): Promise<Buffer> {
  const res = await request(url, { headers });
  const body = Buffer.from(await res.body.arrayBuffer());
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${body.toString().slice(0, 200)}`);
  return body;
}

/** The first PAGES pages of ggr (1000 rows each) of `release` (the current one when undefined), captured with their bodies. */
async function pages(url: string, headers: Record<string, string>, release?: string): Promise<Request[]> {
  const requests: Request[] = [];
  let cursor = '';
  for (let i = 0; i < PAGES; i++) {
    const pathAndQuery = `/v1/financials?metric=ggr&limit=1000${release ? `&release=${release}` : ''}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const body = await get(`${url}${pathAndQuery}`, headers);
    requests.push({ path: pathAndQuery, headers, status: 200, body });
    cursor = (JSON.parse(body.toString()) as { pagination: { cursor: string } }).pagination.cursor;
    if (!cursor) break;
  }
  return requests;
}

async function timed(url: string, requests: Request[]): Promise<{ one: Stats; sixteen: Stats }> {
  await load(url, requests, 1, 40);
  const one = await load(url, requests, 1, 400);
  const sixteen = await load(url, requests, 16, 1600);
  return { one: summarize(one.latencies, one.seconds, one.bytes), sixteen: summarize(sixteen.latencies, sixteen.seconds, sixteen.bytes) };
}

const [dir] = process.argv.slice(2);
if (!dir) {
  line('usage: npx tsx bench/scripts/vintages.ts DATA_DIR_1X');
  process.exit(2);
}
const source = (await currentRelease(path.resolve(dir))) ?? (await latestRelease(path.resolve(dir)));
if (!source) throw new Error(`${dir} holds no release: generate one with npm run etl -- generate --out ${dir}/2026-11 --scale 1`);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'dqs-bench-vintages-'));
const dataDir = path.join(work, 'data');
await releaseCopies(source, dataDir, ['2026-09', '2026-10', '2026-11']);
fs.writeFileSync(path.join(dataDir, 'CURRENT'), '2026-11\n');
line(`three copies of ${source.dir} (${source.manifest.datasets.ggr!.rows.toLocaleString()} ggr rows) as 2026-09, 2026-10, 2026-11`);

const server = await startServer(
  { DATA_DIR: dataDir, STATE_DIR: path.join(work, 'state'), CACHE_MAX_BYTES: '0', RELEASES_IN_MEMORY: '3' },
  path.join(work, 'server.log'),
);
try {
  const current = await pages(server.url, server.headers);
  await timed(server.url, current.slice(0, 5));
  const one = processMemory(server.pid).rss;
  line(`  RSS, 1 release loaded (after 200 pages): ${one} MB`);
  for (const [id, loaded] of [
    ['2026-10', 2],
    ['2026-09', 3],
  ] as const) {
    const started = performance.now();
    await get(`${server.url}/v1/financials?metric=ggr&limit=1000&release=${id}`, server.headers);
    const waited = performance.now() - started;
    await timed(server.url, await pages(server.url, server.headers, id).then((r) => r.slice(0, 5)));
    const rss = processMemory(server.pid).rss;
    line(
      `  first request to ${id}: waited ${(waited / 1000).toFixed(2)} s (its load); RSS with ${loaded} loaded: ${rss} MB = ${(rss / one).toFixed(2)}x one release's`,
    );
  }
  const earlier = await pages(server.url, server.headers, '2026-10');
  // Interleaved, each twice, the best of each kept: the machine's drift hits both alike.
  const runs = { current: [] as Array<{ one: Stats; sixteen: Stats }>, earlier: [] as Array<{ one: Stats; sixteen: Stats }> };
  for (let round = 0; round < 2; round++) {
    runs.current.push(await timed(server.url, current));
    runs.earlier.push(await timed(server.url, earlier));
  }
  const best = (r: Array<{ one: Stats; sixteen: Stats }>) => ({
    one: { p50: Math.min(...r.map((x) => x.one.p50)) },
    sixteen: { rps: Math.max(...r.map((x) => x.sixteen.rps)) },
  });
  const cur = best(runs.current);
  const then = best(runs.earlier);
  line(`  uncached 1000-row page, current:        p50 ${ms(cur.one.p50)} (1 conn)   ${cur.sixteen.rps.toFixed(0)} req/s (16 conn)`);
  line(`  uncached 1000-row page, 2026-10 loaded: p50 ${ms(then.one.p50)} (1 conn)   ${then.sixteen.rps.toFixed(0)} req/s (16 conn)`);
  line(
    `  ratio earlier/current: p50 ${(then.one.p50 / cur.one.p50).toFixed(3)}x, req/s ${(then.sixteen.rps / cur.sixteen.rps).toFixed(3)}x (target: within 10%)`,
  );
  line(`  final RSS ${processMemory(server.pid).rss} MB, peak ${processMemory(server.pid).peak} MB`);
} finally {
  await server.stop();
  fs.rmSync(work, { recursive: true, force: true });
}
