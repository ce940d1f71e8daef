import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { generateRelease } from '../../etl/generate.ts';
import { MANIFEST_FILE } from '../../src/releases/manifest.ts';
import { writePointer } from '../../src/releases/on-disk.ts';
import { load, summarize, type Run, type Stats } from '../runner/load.ts';
import { startServer } from '../runner/server.ts';

// What a live release switch costs the requests served meanwhile, over HTTP on
// loopback: the same request mix (uncached ggr pages; the response cache is off so
// every request queries DuckDB and renders) first with no switch, then from the
// moment the pointer names a new release until the server serves it (the full
// sample loaded beside the old one, then swapped). Any non-200 aborts the run.
//   npx tsx bench/scripts/switch.ts   (DATA_DIR tmp/bench/switch, generated on first run)

const DATA_DIR = path.resolve(import.meta.dirname, '..', '..', 'tmp', 'bench', 'switch');
const CONNECTIONS = 8;
const BATCH = 100;
const MAX_BATCHES = 600;
const YEARS = Array.from({ length: 31 }, (_, i) => 2000 + i);
const REGIONS = ['Europe', 'Asia - ME', 'Africa', 'North America', 'Latin America', 'Oceania'];

const PATHS = Array.from({ length: YEARS.length * REGIONS.length }, (_, n) =>
  `/v1/financials?metric=ggr&year=${YEARS[n % YEARS.length]}&region=${encodeURIComponent(REGIONS[n % REGIONS.length]!)}&limit=100`);
// Each batch starts where the previous one stopped, so every filter gets asked.
let next = 0;
const batch = (headers: Record<string, string>, size: number) => {
  const start = next;
  next = (next + size) % PATHS.length;
  return Array.from({ length: size }, (_, i) => ({ path: PATHS[(start + i) % PATHS.length]!, headers, status: 200 }));
};

const ids = ['2026-10', '2026-11'];
if (!(await fs.stat(path.join(DATA_DIR, ids[0]!, MANIFEST_FILE)).then(() => true, () => false))) {
  console.error('generating the full sample (once)…');
  await generateRelease({ out: path.join(DATA_DIR, ids[0]!), seed: 1, scale: 1, release: ids[0]! });
}
// The second release is the first under another id: the load costs the same.
await fs.rm(path.join(DATA_DIR, ids[1]!), { recursive: true, force: true });
await fs.cp(path.join(DATA_DIR, ids[0]!), path.join(DATA_DIR, ids[1]!), { recursive: true });
const manifestFile = path.join(DATA_DIR, ids[1]!, MANIFEST_FILE);
await fs.writeFile(manifestFile, JSON.stringify({ ...JSON.parse(await fs.readFile(manifestFile, 'utf8')), release: ids[1] }));
await writePointer(DATA_DIR, ids[0]!);

const stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'dqs-bench-'));
const server = await startServer({ DATA_DIR, STATE_DIR: stateDir, CACHE_MAX_BYTES: '0', RELEASE_POLL_MS: '200' }, path.join(stateDir, 'server.log'));
const serving = async () => ((await (await request(`${server.url}/healthz`)).body.json()) as { release: string }).release;
const fmt = (s: Stats) => `p50 ${s.p50.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms, ${s.rps.toFixed(0)} req/s (${s.count} requests)`;
const pooled = (runs: Run[]) => summarize(runs.flatMap((r) => r.latencies), runs.reduce((a, r) => a + r.seconds, 0), 0);
try {
  await load(server.url, batch(server.headers, 500), CONNECTIONS, 500); // warm-up
  const alone: Run[] = [];
  for (let i = 0; i < 20; i++) alone.push(await load(server.url, batch(server.headers, BATCH), CONNECTIONS, BATCH));

  const during: Run[] = [];
  const started = performance.now();
  await writePointer(DATA_DIR, ids[1]!);
  let switched = false;
  const watch = (async () => {
    while (!switched && performance.now() - started < 120_000) {
      switched = (await serving()) === ids[1];
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  while (!switched && during.length < MAX_BATCHES) during.push(await load(server.url, batch(server.headers, BATCH), CONNECTIONS, BATCH));
  await watch;
  const switchSeconds = (performance.now() - started) / 1000;
  if (!switched) throw new Error('the server did not switch within 120 s');

  const a = pooled(alone);
  const d = pooled(during);
  console.log(`no switch:      ${fmt(a)}`);
  console.log(`during switch:  ${fmt(d)}  (pointer written → serving ${ids[1]} in ${switchSeconds.toFixed(1)} s)`);
  console.log(`ratio during/no switch: p50 ${(d.p50 / a.p50).toFixed(2)}x, p99 ${(d.p99 / a.p99).toFixed(2)}x, throughput ${(d.rps / a.rps).toFixed(2)}x; zero non-200s`);
} finally {
  await server.stop();
  await writePointer(DATA_DIR, ids[0]!);
  await fs.rm(stateDir, { recursive: true, force: true });
}
