import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { Database } from '../../src/duckdb/database.ts';
import { whereClauses } from '../../src/query/filters.ts';
import { readPage } from '../../src/query/page.ts';
import { loadRelease, type ServedDataset } from '../../src/releases/load-release.ts';
import { latestRelease } from '../../src/releases/on-disk.ts';
import { type Stats, summarize } from '../runner/load.ts';

// What loading a second release costs the requests served meanwhile, in process
// (a live switch has no HTTP trigger yet): 16 workers ask for the bench's 1000-row
// ggr page (query + JSON render) on the server's pool (4 connections, DUCKDB_THREADS
// 1), first alone, then while a second copy of the release loads on its own
// connection. Also the memory of one and of two releases loaded.
//   npx tsx bench/scripts/reload.ts [DATA_DIR]   (default tmp/bench/data, made by npm run bench)

const DATA_DIR = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..', '..', 'tmp', 'bench', 'data'));
const WORKERS = 16;
const MAX_REQUESTS = 20_000;
const MAX_SECONDS = 30;
const FILTERS = new Map([
  ['region', ['Europe']],
  ['channel', ['Online']],
]);

const mb = (kb: string) => `${Math.round(Number(kb.replace(/\D/g, '')) / 1024)} MB`;
const memory = () => {
  const status = fs.readFileSync('/proc/self/status', 'utf8');
  return `RSS ${mb(/VmRSS:(.*)/.exec(status)![1]!)}, peak ${mb(/VmHWM:(.*)/.exec(status)![1]!)}`;
};

/** Requests from WORKERS workers until `until` settles (bounded in count and time anyway). */
async function serve(db: Database, ggr: ServedDataset, until: Promise<unknown>): Promise<Stats> {
  const clauses = whereClauses(ggr, FILTERS)!;
  let done = false;
  void until.finally(() => (done = true));
  const deadline = performance.now() + MAX_SECONDS * 1000;
  const latencies: number[] = [];
  const worker = async () => {
    while (!done && latencies.length < MAX_REQUESTS && performance.now() < deadline) {
      const t = performance.now();
      const page = await readPage(db, ggr, clauses, 1000, -1);
      ggr.rows.json.render(page.rids, '[', ']');
      latencies.push(performance.now() - t);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: WORKERS }, worker));
  return summarize(latencies, (performance.now() - started) / 1000, 0);
}

const release = await latestRelease(DATA_DIR);
if (!release) throw new Error(`${DATA_DIR}: no release; run npm run bench once, or pass a DATA_DIR holding one`);
const log = pino({ level: 'silent' });
const db = await Database.open({ connections: 4, threads: 1 });
console.log(`open: ${memory()}`);
const loader = await db.connect();
let started = performance.now();
const first = await loadRelease(loader, release, log);
console.log(`first load: ${((performance.now() - started) / 1000).toFixed(1)} s, ${memory()}`);
const ggr = first.datasets.get('ggr')!;

const fmt = (s: Stats) => `p50 ${s.p50.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms, ${s.rps.toFixed(0)} pages/s (${s.count} pages)`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
console.log(`alone (10 s):           ${fmt(await serve(db, ggr, sleep(10_000)))}`);
started = performance.now();
const second = loadRelease(loader, { ...release, manifest: { ...release.manifest, release: '2099-12' } }, log);
const during = await serve(db, ggr, second);
await second;
console.log(`during a second load:   ${fmt(during)}; the load took ${((performance.now() - started) / 1000).toFixed(1)} s`);
console.log(`two releases loaded: ${memory()}`);
loader.closeSync();
db.close();
