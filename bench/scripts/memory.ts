import fs from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { latestRelease } from '../../src/releases/on-disk.ts';
import { load } from '../runner/load.ts';
import { processMemory, startServer, type BenchServer } from '../runner/server.ts';

// Resident memory of `npm start` on a release, as an operator sees it: the peak while
// loading (VmHWM), RSS after 30 s idle and after serving pages, and what it is made
// of: code mapped from files (node, DuckDB's library), V8's heap, the release's
// columns, rollups and renderers (dqs_release_memory_bytes), the other external
// memory of the JS side (buffers), DuckDB's own accounting (dqs_duckdb_memory_bytes),
// and the rest (allocators' free lists, thread stacks). Several starts, since one is
// not enough on a shared machine.
//   npx tsx bench/scripts/memory.ts [DATA_DIR] [STARTS]   (default tmp/bench/data, made by npm run bench; 3)

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const DATA_DIR = path.resolve(process.argv[2] ?? path.join(ROOT, 'tmp', 'bench', 'data'));
const STARTS = Number(process.argv[3] ?? 3);
const IDLE_SECONDS = 30;
const PAGES = 300;
const QUERY = '/v1/financials?metric=ggr&region=Europe&channel=Online&limit=1000';

/** Resident pages mapped from files (code and read-only data of node and its native libraries), in MB. */
function fileBackedMb(pid: number): number {
  let kb = 0;
  let file = false;
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) file = / \//.test(line);
    else if (file && line.startsWith('Rss:')) kb += Number(/(\d+)/.exec(line)![1]);
  }
  return Math.round(kb / 1024);
}

async function breakdown(server: BenchServer): Promise<string> {
  const text = await (await request(`${server.adminUrl}/metrics`)).body.text();
  const sum = (pattern: RegExp) => [...text.matchAll(pattern)].reduce((mb, m) => mb + Number(m[1]) / 1e6, 0);
  const release = sum(/^dqs_release_memory_bytes\{[^}]*\} (\d+)/gm);
  const parts = {
    'code mapped from files': fileBackedMb(server.pid),
    'V8 heap (committed)': sum(/^dqs_nodejs_heap_size_total_bytes (\d+)/gm),
    'release (columns, rollups, renderers)': release,
    'other JS buffers': sum(/^dqs_nodejs_external_memory_bytes (\d+)/gm) - release,
    'DuckDB (its own accounting)': sum(/^dqs_duckdb_memory_bytes\{[^}]*\} (\d+)/gm),
  };
  const rss = processMemory(server.pid).rss;
  const known = Object.values(parts).reduce((a, b) => a + b, 0);
  return [...Object.entries(parts).map(([name, mb]) => `${name} ${mb.toFixed(0)} MB`), `the rest (allocators, stacks) ${(rss - known).toFixed(0)} MB`].join('; ');
}

if (!(await latestRelease(DATA_DIR))) throw new Error(`${DATA_DIR}: no release; run npm run bench once, or pass a DATA_DIR holding one`);
const stateDir = path.join(ROOT, 'tmp', 'bench', 'memory-state');
for (let start = 1; start <= STARTS; start++) {
  const server = await startServer({ DATA_DIR, STATE_DIR: stateDir }, path.join(ROOT, 'tmp', 'bench', 'logs', 'memory.log'));
  try {
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const idle = processMemory(server.pid);
    const parts = await breakdown(server);
    await load(server.url, [{ path: QUERY, headers: server.headers, status: 200 }], 1, PAGES);
    const served = processMemory(server.pid);
    console.log(`start ${start}: peak while loading ${idle.peak} MB; idle ${IDLE_SECONDS} s ${idle.rss} MB (${parts}); after ${PAGES} pages ${served.rss} MB`);
  } finally {
    await server.stop();
  }
}
